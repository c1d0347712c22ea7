import { summarizeScores } from '@sightline/core';

export default function scoreStatsTask({ scoreLists }: { scoreLists: unknown[][] }) {
  return summarizeScores(scoreLists);
}
