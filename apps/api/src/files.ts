// What the routes that answer with a file share: its name.

/** RFC 6266: an ASCII stand-in for old clients, and the exact name, percent-encoded, for the others. */
export function attachment(filename: string) {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\/]/g, '_');
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
