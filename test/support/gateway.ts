import { randomBytes } from 'node:crypto';
import { FakeAnthropic } from '../fakes/fake-anthropic';
import { FakeOpenAI } from '../fakes/fake-openai';
import { buildStack, type TestStack } from './app';

export type Gateway = {
  stack: TestStack;
  openai: FakeOpenAI;
  anthropic: FakeAnthropic;
  secretsKey: string;
  close(): Promise<void>;
};

/** The API and worker with their providers pointed at fake OpenAI and Anthropic servers on 127.0.0.1. */
export async function startGateway(env: Record<string, string | undefined> = {}): Promise<Gateway> {
  const openai = await new FakeOpenAI().start();
  const anthropic = await new FakeAnthropic().start();
  const secretsKey = randomBytes(32).toString('hex');
  const stack = await buildStack({
    env: {
      OPENAI_BASE_URL: openai.baseURL,
      OPENAI_API_KEY: 'sk-env-openai',
      ANTHROPIC_BASE_URL: anthropic.baseURL,
      ANTHROPIC_API_KEY: 'sk-env-anthropic',
      SECRETS_KEY: secretsKey,
      // The fake providers listen on 127.0.0.1, where saved base URLs may not point by default.
      ALLOW_PRIVATE_PROVIDER_URLS: 'true',
      COMPLETION_TIMEOUT_MS: '1000',
      PROVIDER_MAX_RETRIES: '2',
      ...env,
    },
  });
  return {
    stack,
    openai,
    anthropic,
    secretsKey,
    async close() {
      await stack.close();
      await openai.stop();
      await anthropic.stop();
    },
  };
}

export const userMessage = (content: string) => ({ role: 'user' as const, content });
