/**
 * Whether a parsed JSON value nests arrays and objects more than `max` levels deep, measured without
 * recursion: JSON.parse builds values of any depth, which recursive code (a validator) would overflow
 * its call stack on.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}
