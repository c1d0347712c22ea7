import { migrate } from '@sightline/db';
import { BaseEnv, loadEnv } from '@sightline/schemas';

const env = loadEnv(BaseEnv);
await migrate(env.DATABASE_URL, console.log);
console.log('migrations are up to date');
