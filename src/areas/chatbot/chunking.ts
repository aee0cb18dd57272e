/**
 * Knowledge split into passages for retrieval: paragraphs packed up to about 800 characters,
 * a long paragraph cut at sentence ends, each passage overlapping the previous by its last
 * sentence so an answer that straddles a cut is still found whole in one of them.
 */
const TARGET = 800;

export function chunkText(text: string): string[] {
  const paragraphs = text
    .replace(/\r\n?/g, '\n')
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
  const pieces = paragraphs.flatMap((p) => (p.length <= TARGET ? [p] : sentencesPacked(p)));
  const chunks: string[] = [];
  let current = '';
  for (const piece of pieces) {
    if (current && current.length + piece.length + 1 > TARGET) {
      chunks.push(current);
      current = `${lastSentence(current)} ${piece}`.trim();
    } else current = current ? `${current}\n${piece}` : piece;
  }
  if (current) chunks.push(current);
  return chunks;
}

function sentences(p: string): string[] {
  return (
    p
      .match(/[^.!?]+[.!?]+["')\]]*\s*|[^.!?]+$/g)
      ?.map((s) => s.trim())
      .filter(Boolean) ?? [p]
  );
}

function sentencesPacked(p: string): string[] {
  const out: string[] = [];
  let current = '';
  for (const s of sentences(p)) {
    // A "sentence" longer than the target (no punctuation) is cut hard.
    for (let i = 0; i < s.length; i += TARGET) {
      const part = s.slice(i, i + TARGET);
      if (current && current.length + part.length + 1 > TARGET) {
        out.push(current);
        current = part;
      } else current = current ? `${current} ${part}` : part;
    }
  }
  if (current) out.push(current);
  return out;
}

function lastSentence(chunk: string): string {
  const all = sentences(chunk);
  const last = all[all.length - 1] ?? '';
  return last.length < TARGET / 4 ? last : '';
}

/** Readable text of an HTML page: scripts, styles and tags out, block ends as line breaks. */
export function htmlToText(html: string): { title: string | null; text: string } {
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1]?.trim() ?? null;
  const text = html
    .replace(/<(script|style|noscript|template)[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<\/(p|div|h[1-6]|li|tr|section|article|br)>|<br\s*\/?>/gi, '\n\n')
    .replace(/<[^>]+>/g, ' ')
    .replace(/[ \t]+/g, ' ');
  return { title: title ? decodeEntities(title.replace(/<[^>]+>/g, '')) : null, text: decodeEntities(text) };
}

function decodeEntities(s: string): string {
  return s
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&#(\d+);/g, (_, n: string) => String.fromCodePoint(Number(n)))
    .replace(/&amp;/g, '&');
}
