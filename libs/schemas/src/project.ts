import { z } from 'zod';

export const ProjectName = z.string().min(1).max(255);

export const ProjectCreateSchema = z.object({ name: ProjectName });
