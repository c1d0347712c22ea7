import { z } from 'zod';

export const ProjectCreateSchema = z.object({ name: z.string().min(1).max(255) });
