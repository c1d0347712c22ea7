import { scoreAgreement, valueAgreement, type ScoreAgreement, type ValueAgreement } from '@sightline/core';

export type AgreementInput =
  | { kind: 'score'; judge: [number, number][]; people: [number, number][] }
  | { kind: 'value'; labels: string[]; judge: [string, string][]; people: [string, string][] };

export type AgreementOutput = { judge: ScoreAgreement | ValueAgreement; people: ScoreAgreement | ValueAgreement };

/** Agreement figures with their bootstrap intervals: thousands of resamples, on a pool thread. */
export default function agreementTask(input: AgreementInput): AgreementOutput {
  return input.kind === 'score'
    ? { judge: scoreAgreement(input.judge), people: scoreAgreement(input.people) }
    : { judge: valueAgreement(input.judge, input.labels), people: valueAgreement(input.people, input.labels) };
}
