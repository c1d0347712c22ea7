import { formatLatency } from './format';

/** An axis label's width in pixels, estimated: the labels are short monospace text (`1.25 s`, `850 ms`). */
const CHAR_PX = 7.5;
const GAP_PX = 16;
const labelWidth = (text: string) => text.length * CHAR_PX + GAP_PX;

/** A label on the timeline's axis: where (a fraction of the trace's duration) and what it reads. */
type AxisTick = { at: number; label: string };

/**
 * The timeline's axis for a trace of `total` seconds drawn `width` pixels wide: the start, the end, and
 * between them round times (1, 2 or 5 times a power of ten) as many as fit without overlapping. The start's
 * label is drawn from its point rightwards, the end's leftwards, the others centred on theirs. An axis too
 * narrow for the end's label (not measured yet) has none.
 */
export function axisTicks(total: number, width: number): AxisTick[] {
  const start = { at: 0, label: formatLatency(0) };
  if (!(total > 0)) return [start];
  const end = { at: 1, label: formatLatency(total) };
  if (width < labelWidth(start.label) + labelWidth(end.label)) return width < labelWidth(end.label) ? [] : [end];
  let ticks = between(total, width, Math.max(labelWidth(end.label), labelWidth(formatLatency(total / 2))));
  // A round time may read longer than the end ("1 min 0 s" before "1 min 5 s"): then spaced by the longest.
  const widest = Math.max(labelWidth(end.label), ...ticks.map((t) => labelWidth(t.label)));
  ticks = between(total, width, widest);
  return [start, ...ticks, end];
}

/**
 * Round times strictly inside the axis, each label `widest` pixels at most: a label's width apart at least
 * (a label and a half, since the start's and the end's labels sit beside their points, not over them).
 */
function between(total: number, width: number, widest: number): AxisTick[] {
  const pxPerSecond = width / total;
  const step = niceStep((widest * 1.5) / pxPerSecond);
  const ticks: AxisTick[] = [];
  for (let i = 1; (total - i * step) * pxPerSecond >= widest * 1.5; i++) {
    ticks.push({ at: (i * step) / total, label: formatLatency(i * step) });
  }
  return ticks;
}

/** The smallest of 1, 2 or 5 times a power of ten that is at least `x`. */
function niceStep(x: number): number {
  const power = 10 ** Math.floor(Math.log10(x));
  return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= x * (1 - 1e-9))!;
}
