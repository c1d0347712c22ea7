import { describe, expect, it } from 'vitest';
import { searchWordsOf } from '@sightline/db';
import { useSql } from '../support/fixtures';

const { sql } = useSql();

// The worker stores each span's words; search looks spans up by the words PostgreSQL's text search finds
// in the terms, then rechecks them with it. So every word PostgreSQL finds in a text must be among the
// worker's words for it, or a span that matches would never be a candidate.
describe('the words the worker stores for search', () => {
  it('hold every word PostgreSQL finds in the same text', async () => {
    const documents = [
      { output: 'The quick brown Fox jumps over the lazy dog.' },
      { output: "don't stop: snake_case and kebab-case, state-of-the-art, e-mail" },
      { output: 'Ünïcödé wörds, straße, Привет мир, 東京, naïve café' },
      { output: 'gpt-4o v1.2.3 abc123 123abc 0x1f deadbeef42 aGVsbG8gd29ybGQ= 3.14 -7' },
      { output: 'write to ops@example.com or see https://docs.example.com/guide/setup?x=1#part' },
      { output: 'C:\\Users\\me\\notes.txt /var/log/app.log <b>bold</b> &amp; tabs\tand\nnewlines' },
      { inputs: { messages: [{ role: 'system', content: 'You answer questions' }] }, metadata: { Region: 'EU-West' } },
    ];
    for (const fields of documents) {
      const text = `${fields.inputs ? JSON.stringify(fields.inputs) : ''} ${fields.output ?? ''} ${fields.metadata ? JSON.stringify(fields.metadata) : ''}`;
      const [{ lexemes }] = await sql<{ lexemes: string[] }[]>`
        select array(select w from unnest(tsvector_to_array(to_tsvector('sightline_words', ${text}))) w
                     where w not like '%-%') as lexemes`;
      const words = searchWordsOf(fields);
      expect(
        lexemes.filter((w) => !words.includes(w)),
        text,
      ).toEqual([]);
      expect(lexemes.length).toBeGreaterThan(0);
    }
  });

  it('leave out numbers, ids and hashes, whose number has no bound', () => {
    expect(searchWordsOf({ output: 'order 12345 id 3f9a2bc0 token aGVsbG8gd29ybGQ user_42 Done' }).sort()).toEqual(
      ['done', 'id', 'order', 'token', 'user'].sort(),
    );
  });
});
