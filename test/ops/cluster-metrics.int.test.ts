import { describe, expect, it } from 'vitest';
import { startScript } from '../support/processes';

/** What the cluster's API process got from metricsText(), with its primary answering or not. */
async function scrape(primary: 'answer' | 'silent') {
  const { child, output } = await startScript(
    'test/support/metrics-cluster.ts',
    { METRICS_PRIMARY: primary },
    /^\{.*\}$/m,
  );
  child.kill();
  return JSON.parse(/^\{.*\}$/m.exec(output())![0]) as { text?: string; unavailable?: string; error?: string };
}

describe("the cluster's metrics", () => {
  it('come from the primary when it answers', async () => {
    expect((await scrape('answer')).text).toMatch(/^# HELP /m);
  });

  it('fail with a clear reason, rather than hang, when the primary does not answer', async () => {
    expect(await scrape('silent')).toEqual({ unavailable: expect.stringMatching(/primary did not answer/) });
  });
});
