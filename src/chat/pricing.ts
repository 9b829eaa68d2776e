import { type Charge, type PriceLine, priceCharge } from '../billing/charge.ts';
import type { ChatModel } from '../catalog/local.ts';

export function chatLines(model: ChatModel, inputTokens: number, outputTokens: number): PriceLine[] {
  return [
    { item: 'input_tokens', quantity: inputTokens, unitPriceNanosPerMillion: model.inputNanosPerMillion },
    { item: 'output_tokens', quantity: outputTokens, unitPriceNanosPerMillion: model.outputNanosPerMillion },
  ];
}

export function chatCharge(model: ChatModel, inputTokens: number, outputTokens: number): Charge {
  return priceCharge(chatLines(model, inputTokens, outputTokens));
}

/** The most output tokens whose worst-case charge fits in `budgetNanos` (0 when not even one does). */
export function affordableOutputTokens(model: ChatModel, inputTokens: number, budgetNanos: bigint): number {
  let low = 0;
  let high = model.maxOutputTokens;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (chatCharge(model, inputTokens, middle).chargedNanos <= budgetNanos) low = middle;
    else high = middle - 1;
  }
  return low;
}
