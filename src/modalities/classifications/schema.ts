import type { Answer, Question } from './request.ts';

/**
 * The JSON schemas the chat model answers in (OpenAI's strict structured outputs: every property required, no
 * others), and the checks of its answer against the request. A strict provider cannot break the schema, but not
 * every provider is strict (Anthropic's models are only asked to follow it), so every answer is checked.
 */

type Schema = Record<string, unknown>;

function strictObject(properties: Record<string, Schema>): Schema {
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}

export const inputKey = (index: number) => `input_${index}`;

/** One property per input, so the schema itself says how many verdicts there are and which is which. */
export function labelsSchema(inputs: number, labels: readonly string[]): Schema {
  const verdict = strictObject({
    label: { type: 'string', enum: [...labels] },
    score: { type: 'number', description: 'confidence in the label, from 0 to 1' },
  });
  return strictObject(Object.fromEntries(Array.from({ length: inputs }, (_, i) => [inputKey(i), verdict])));
}

/** Each input's label and score, or why the answer cannot be used. */
export function checkLabels(
  answer: Record<string, unknown>,
  inputs: number,
  labels: readonly string[],
): { label: string; score: number }[] | string {
  const verdicts: { label: string; score: number }[] = [];
  for (let i = 0; i < inputs; i++) {
    const verdict = answer[inputKey(i)] as { label?: unknown; score?: unknown } | undefined;
    if (typeof verdict !== 'object' || verdict === null) return `the answer has no verdict for input ${i}`;
    const { label, score } = verdict;
    if (typeof label !== 'string' || !labels.includes(label)) {
      return `the label for input ${i} is ${JSON.stringify(label)}, not one of the labels`;
    }
    if (typeof score !== 'number' || !Number.isFinite(score) || score < 0 || score > 1) {
      return `the score for input ${i} is ${JSON.stringify(score)}, not a number from 0 to 1`;
    }
    verdicts.push({ label, score });
  }
  return verdicts;
}

function answerSchema(question: Question): Schema {
  const description = question.question;
  switch (question.type) {
    case 'boolean':
      return { type: 'boolean', description };
    case 'number':
      return { type: 'number', description };
    case 'enum':
      return { type: 'string', enum: [...(question.options ?? [])], description };
    case 'text':
      return { type: 'string', description };
    default: {
      const _exhaustive: never = question.type;
      return _exhaustive;
    }
  }
}

/** One property per question id, typed as the question asks. */
export function questionsSchema(questions: readonly Question[]): Schema {
  return strictObject(Object.fromEntries(questions.map((q) => [q.id, answerSchema(q)])));
}

function checkAnswer(question: Question, value: unknown): string | undefined {
  const shown = JSON.stringify(value) ?? 'nothing';
  switch (question.type) {
    case 'boolean':
      return typeof value === 'boolean'
        ? undefined
        : `the answer to '${question.id}' is ${shown}, not a boolean`;
    case 'number':
      return typeof value === 'number' && Number.isFinite(value)
        ? undefined
        : `the answer to '${question.id}' is ${shown}, not a number`;
    case 'enum':
      return typeof value === 'string' && question.options?.includes(value)
        ? undefined
        : `the answer to '${question.id}' is ${shown}, not one of its options`;
    case 'text':
      return typeof value === 'string' ? undefined : `the answer to '${question.id}' is ${shown}, not text`;
    default: {
      const _exhaustive: never = question.type;
      return _exhaustive;
    }
  }
}

/** Each question's answer, in question order, or why the answer cannot be used. */
export function checkAnswers(
  answer: Record<string, unknown>,
  questions: readonly Question[],
): { id: string; type: Question['type']; answer: Answer }[] | string {
  const answers: { id: string; type: Question['type']; answer: Answer }[] = [];
  for (const question of questions) {
    const value = answer[question.id];
    const wrong = checkAnswer(question, value);
    if (wrong) return wrong;
    answers.push({ id: question.id, type: question.type, answer: value as Answer });
  }
  return answers;
}
