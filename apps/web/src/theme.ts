import {
  Badge,
  createTheme,
  darken,
  DrawerCloseButton,
  FileInput,
  lighten,
  luminance,
  ModalCloseButton,
  Notification,
  type CSSVariablesResolver,
} from '@mantine/core';

export const theme = createTheme({
  primaryColor: 'indigo',
  defaultRadius: 'md',
  fontFamily: 'Inter, ui-sans-serif, system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  fontFamilyMonospace: 'ui-monospace, "JetBrains Mono", "SFMono-Regular", Menlo, Consolas, monospace',
  headings: { fontWeight: '650' },
  cursorType: 'pointer',
  // A keyboard user sees where focus is; a mouse click shows no ring.
  focusRing: 'auto',
  components: {
    // A badge is a status or a verdict ("SIGNIFICANTLY BETTER"): read whole, never cut to fit a narrow column
    // (the column, or the table in its scrolling box, grows). A chip of free text opts out with its own style.
    Badge: Badge.extend({ styles: { root: { flexShrink: 0, minWidth: 'max-content' } } }),
    // Icon-only buttons the kit draws without a name.
    ModalCloseButton: ModalCloseButton.extend({ defaultProps: { 'aria-label': 'Close' } }),
    DrawerCloseButton: DrawerCloseButton.extend({ defaultProps: { 'aria-label': 'Close' } }),
    FileInput: FileInput.extend({ defaultProps: { clearButtonProps: { 'aria-label': 'Clear the file' } } }),
    Notification: Notification.extend({
      defaultProps: { closeButtonProps: { 'aria-label': 'Close the notification' } },
    }),
  },
});

// WCAG AA for text: every colour text is written in is read against the backgrounds it sits on.
const AA = 4.5;
const contrast = (a: string, b: string) => {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
};
/** The first candidate readable on every background, or the last one darkened (lightened) until it is. */
function readable(candidates: readonly string[], backgrounds: readonly string[], towards: 'darker' | 'lighter') {
  const ok = (c: string) => backgrounds.every((bg) => contrast(c, bg) >= AA);
  const found = candidates.find(ok);
  if (found) return found;
  const last = candidates.at(-1)!;
  let c = last;
  for (let step = 0.04; !ok(c) && step < 1; step += 0.04)
    c = towards === 'darker' ? darken(last, step) : lighten(last, step);
  return c;
}

/**
 * The kit's default palette puts light text below 4.5:1: dimmed grey (3.3:1 on white, 4.0:1 on the dark
 * body), errors in red-6, filled buttons and links in indigo-6 (4.3:1 under white text), and most colours'
 * `c="teal"`-style text and light badges. Each of those variables is replaced here by the nearest shade of
 * the same colour that reads at 4.5:1 on the surfaces it is drawn on (white, the grey of code and hovered
 * rows, the selected row's tint; the dark body and panels), so that the fix is in one place and follows the
 * palette.
 */
export const cssVariablesResolver: CSSVariablesResolver = (t) => {
  const { white } = t;
  const { gray, dark } = t.colors;
  const primary = t.colors[t.primaryColor]!;
  // The dark scheme's light variant: the selected span's row, a light badge.
  const darkTint = darken(primary[9], 0.5);
  const light: Record<string, string> = {
    '--mantine-color-dimmed': readable([gray[6]], [white, gray[1], primary[1]], 'darker'),
    '--mantine-color-placeholder': 'var(--mantine-color-dimmed)',
    '--mantine-color-error': 'var(--mantine-color-red-text)',
    '--mantine-color-anchor': `var(--mantine-color-${t.primaryColor}-text)`,
  };
  const darkVars: Record<string, string> = {
    '--mantine-color-dimmed': readable([dark[2]], [dark[7], dark[6], darkTint], 'lighter'),
    '--mantine-color-placeholder': 'var(--mantine-color-dimmed)',
    '--mantine-color-error': 'var(--mantine-color-red-text)',
    '--mantine-color-anchor': `var(--mantine-color-${t.primaryColor}-text)`,
  };
  for (const [name, shades] of Object.entries(t.colors)) {
    if (name === 'dark' || !shades) continue;
    // Light: white text on filled; the colour as text on white, light grey and its own tint (a link in a
    // highlighted row); light buttons' and badges' text on their tint and its hover (shades 1 and 2).
    const filled = readable(shades.slice(6), [white], 'darker');
    light[`--mantine-color-${name}-filled`] = filled;
    light[`--mantine-color-${name}-filled-hover`] = darken(filled, 0.12);
    light[`--mantine-color-${name}-outline`] = filled;
    light[`--mantine-color-${name}-text`] = readable(shades.slice(6), [white, gray[1], shades[1]], 'darker');
    light[`--mantine-color-${name}-light-color`] = readable(shades.slice(8), [shades[1], shades[2]], 'darker');
    // Dark: white text on filled; the colour as text on the body, on panels and on its own tint.
    const darkFilled = readable(shades.slice(8), [white], 'darker');
    darkVars[`--mantine-color-${name}-filled`] = darkFilled;
    darkVars[`--mantine-color-${name}-filled-hover`] = darken(darkFilled, 0.12);
    const darkText = readable([...shades.slice(0, 5)].reverse(), [dark[7], dark[6], darken(shades[9], 0.5)], 'lighter');
    darkVars[`--mantine-color-${name}-text`] = darkText;
    darkVars[`--mantine-color-${name}-outline`] = darkText;
  }
  return { variables: {}, light, dark: darkVars };
};

/** Badge colours of span kinds and message roles, used the same everywhere. */
export const KIND_COLORS: Record<string, string> = {
  llm: 'violet',
  chain: 'blue',
  tool: 'orange',
  retriever: 'teal',
  agent: 'pink',
  embedding: 'cyan',
  prompt: 'grape',
  parser: 'lime',
  // Kinds OpenTelemetry conventions name (OpenInference's, OpenLLMetry's).
  reranker: 'teal',
  guardrail: 'yellow',
  evaluator: 'green',
  workflow: 'indigo',
  task: 'blue',
};
export const ROLE_COLORS: Record<string, string> = {
  system: 'gray',
  user: 'blue',
  assistant: 'violet',
  tool: 'orange',
  function: 'orange',
  example_user: 'cyan',
  example_assistant: 'grape',
};
