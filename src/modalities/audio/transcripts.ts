import type { Transcript, TranscriptSegment } from '../../contracts/audio.ts';
import type { TranscriptFormat } from './request.ts';

/** A transcript as billed: the duration is the provider's, or the gateway's estimate when it reported none. */
export interface BilledTranscript extends Transcript {
  durationSeconds: number;
  /** True when the duration (and so the charge) is the gateway's estimate. */
  durationEstimated: boolean;
}

export interface RenderedTranscript {
  contentType: string;
  body: string | Record<string, unknown>;
}

/**
 * The transcript in the format the client asked for, in OpenAI's shapes. `usage` is OpenAI's duration usage
 * (`{type: "duration", seconds}`, the seconds billed by), with `estimated: true` when the provider measured none.
 */
export function renderTranscript(transcript: BilledTranscript, format: TranscriptFormat): RenderedTranscript {
  const usage = {
    type: 'duration',
    seconds: transcript.durationSeconds,
    ...(transcript.durationEstimated ? { estimated: true } : {}),
  };
  switch (format) {
    case 'json':
      return { contentType: 'application/json', body: { text: transcript.text, usage } };
    case 'verbose_json':
      return {
        contentType: 'application/json',
        body: {
          task: 'transcribe',
          language: transcript.language ?? 'unknown',
          duration: transcript.durationSeconds,
          text: transcript.text,
          segments: transcript.segments ?? [],
          ...(transcript.words ? { words: transcript.words } : {}),
          usage,
        },
      };
    case 'text':
      return { contentType: 'text/plain; charset=utf-8', body: `${transcript.text}\n` };
    case 'srt':
      return { contentType: 'text/plain; charset=utf-8', body: srt(transcript.segments ?? []) };
    case 'vtt':
      return { contentType: 'text/vtt; charset=utf-8', body: vtt(transcript.segments ?? []) };
    default: {
      const _exhaustive: never = format;
      return _exhaustive;
    }
  }
}

/** `hh:mm:ss<separator>mmm`, as SubRip (`,`) and WebVTT (`.`) write times. */
export function timestamp(seconds: number, separator: ',' | '.'): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  return `${pad(h)}:${pad(m)}:${pad(s)}${separator}${pad(ms % 1000, 3)}`;
}

function srt(segments: TranscriptSegment[]): string {
  return segments
    .map(
      (segment, i) =>
        `${i + 1}\n${timestamp(segment.start, ',')} --> ${timestamp(segment.end, ',')}\n${segment.text.trim()}\n\n`,
    )
    .join('');
}

function vtt(segments: TranscriptSegment[]): string {
  const cues = segments.map(
    (segment) =>
      `${timestamp(segment.start, '.')} --> ${timestamp(segment.end, '.')}\n${segment.text.trim()}\n\n`,
  );
  return `WEBVTT\n\n${cues.join('')}`;
}
