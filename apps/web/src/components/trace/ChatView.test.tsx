import { fireEvent, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { chatOf, outputMessage } from '../../lib/chat';
import { renderWithKit } from '../../test/render';
import { ChatView } from './ChatView';

const SPAN = {
  configuration: {
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'You answer with **steps**.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Rotate my key?' },
          { type: 'image_url', image_url: { url: 'https://example.com/k.png' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'search_docs', arguments: '{"query":"rotate","top_k":3}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'keys.md#rotation' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { id: 7 } }] },
    ],
  },
  output:
    'Do this:\n\n1. Create a key\n2. Revoke the old one\n\n```sh\nnpm run apikey -- create\n```\n\nUse `--role member`.',
};

describe('chat rendering', () => {
  it('brings every provider shape to one list of messages, the output last', () => {
    const messages = chatOf(SPAN);
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'assistant']);
    expect(messages[1]!.parts).toEqual([
      { type: 'text', text: 'Rotate my key?' },
      { type: 'image', url: 'https://example.com/k.png' },
    ]);
    expect(messages[2]!.parts).toEqual([
      { type: 'tool_call', name: 'search_docs', id: 'call_1', arguments: '{\n  "query": "rotate",\n  "top_k": 3\n}' },
    ]);
    expect(messages[3]!.parts).toEqual([{ type: 'tool_result', content: 'keys.md#rotation', id: 'call_1' }]);
    expect(messages[4]!.parts[0]).toMatchObject({ type: 'tool_call', name: 'lookup', id: 'toolu_1' });
    expect(messages[5]!.fromOutput).toBe(true);
    expect(chatOf({ configuration: { model: 'x' }, output: 'hi' })).toEqual([]);
    expect(
      outputMessage('{"role":"assistant","content":null,"tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}')!
        .parts[0],
    ).toMatchObject({ type: 'tool_call', name: 'f' });
  });

  it('shows roles, Markdown with code blocks, and tool calls with their arguments', () => {
    renderWithKit(<ChatView messages={chatOf(SPAN)} />);
    const items = screen.getAllByLabelText(/ message$/);
    expect(items.map((i) => i.getAttribute('aria-label'))).toEqual([
      'system message',
      'user message',
      'assistant message',
      'tool message',
      'assistant message',
      'assistant message',
    ]);
    expect(within(items[0]!).getByText('system')).toBeTruthy();
    expect(within(items[0]!).getByText('steps').tagName).toBe('STRONG');
    expect(within(items[1]!).getByRole('img').getAttribute('src')).toBe('https://example.com/k.png');
    const call = within(items[2]!).getByLabelText('Call of search_docs');
    expect(call.textContent).toContain('search_docs()');
    expect(call.textContent).toContain('"top_k": 3');
    expect(items[3]!.textContent).toContain('result of call_1');
    const answer = items[5]!;
    expect(answer.querySelectorAll('ol > li')).toHaveLength(2); // the Markdown list
    expect(answer.querySelector('pre')!.textContent).toBe('npm run apikey -- create');
    expect(within(answer).getByText('--role member').tagName).toBe('CODE');
  });

  it('renders no raw HTML from a model', () => {
    renderWithKit(
      <ChatView
        messages={chatOf({
          configuration: { messages: [{ role: 'user', content: '<img src=x onerror="alert(1)"><b>bold</b>' }] },
        })}
      />,
    );
    expect(document.querySelector('img[src="x"]')).toBeNull();
    expect(document.querySelector('b')).toBeNull();
  });

  it('cuts a very large message to a preview, with a way to show all of it', () => {
    const big = 'x'.repeat(5 * 1024 * 1024);
    renderWithKit(<ChatView messages={chatOf({ configuration: { messages: [{ role: 'user', content: big }] } })} />);
    const item = screen.getByRole('listitem');
    expect(item.textContent!.length).toBeLessThan(30_000);
    expect(item.textContent).toContain('of 5.0 MB');
    fireEvent.click(screen.getByRole('button', { name: 'Show all' }));
    expect(screen.getByRole('listitem').textContent!.length).toBeGreaterThan(5 * 1024 * 1024);
  });
});
