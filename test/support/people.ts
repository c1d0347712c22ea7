import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { hashPassword } from '@sightline/core';
import { addMembership, createUser, type Sql } from '@sightline/db';
import type { ApiKeyRole } from '@sightline/schemas';

export type Person = { id: string; email: string; name: string; password: string };

/** A person with a password, member of `organizationId` with `role`. */
export async function newPerson(
  sql: Sql,
  organizationId: string,
  role: ApiKeyRole,
  options: { mustChangePassword?: boolean } = {},
): Promise<Person> {
  const tag = randomBytes(4).toString('hex');
  const person = {
    email: `${role}-${tag}@example.com`,
    name: `Ada ${tag}`,
    password: `pw-${randomBytes(9).toString('hex')}`,
  };
  const user = (await createUser(sql, {
    email: person.email,
    name: person.name,
    passwordHash: await hashPassword(person.password),
    mustChangePassword: options.mustChangePassword,
  }))!;
  await addMembership(sql, organizationId, user.id, role);
  return { id: user.id, ...person };
}

/** What the console sends with a write it makes with its cookie. */
export const CONSOLE_HEADERS = { 'x-sightline-csrf': '1' };

/** Signs in through POST /auth/login; answers the session cookie as a `cookie` header's value. */
export async function signIn(app: FastifyInstance, person: Pick<Person, 'email' | 'password'>): Promise<string> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/svc/v1/auth/login',
    headers: CONSOLE_HEADERS,
    payload: { email: person.email, password: person.password },
  });
  expect(res.statusCode, res.body).toBe(200);
  const cookie = res.cookies.find((c) => c.name === 'sightline_session');
  return `sightline_session=${cookie!.value}`;
}

/** A JSON request to `/api/svc/v1{path}` with a session cookie, as the console makes it. */
export function callAs(
  app: FastifyInstance,
  cookie: string,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  body?: unknown,
  headers: Record<string, string> = CONSOLE_HEADERS,
) {
  return app.inject({
    method,
    url: `/api/svc/v1${path}`,
    headers: { cookie, ...headers, ...(body !== undefined && { 'content-type': 'application/json' }) },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
}
