import { compareRuns, type RunSample } from '@sightline/core';

/** The samples come as JSON text, so that parsing them (like the statistics) happens on this thread. */
export default function compareTask({
  samples,
  runs,
  baseline,
}: {
  samples: string;
  runs: string[];
  baseline: string;
}) {
  return compareRuns(JSON.parse(samples) as RunSample[], runs, baseline);
}
