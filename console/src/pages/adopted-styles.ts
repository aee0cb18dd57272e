/**
 * xterm.js writes its theme and cell sizes into `<style>` elements it makes, which the console's
 * Content-Security-Policy (`style-src 'self'`, no inline style) refuses. Rather than loosen the
 * policy for every page, `<style>` elements made through `document.createElement` become inert
 * placeholders whose text goes into a constructed style sheet adopted by the document (which the
 * policy allows, as it does style properties set from script). Installed once, on the first
 * terminal; no other code of the console makes `<style>` elements.
 */
let installed = false;

export function adoptInlineStyles(): void {
  if (installed) return;
  installed = true;
  const make = Document.prototype.createElement;
  Document.prototype.createElement = function (
    this: Document,
    tag: string,
    options?: ElementCreationOptions,
  ) {
    if (String(tag).toLowerCase() !== 'style') return make.call(this, tag, options);
    const sheet = new CSSStyleSheet();
    this.adoptedStyleSheets = [...this.adoptedStyleSheets, sheet];
    const placeholder = make.call(this, 'fjord-style', options);
    placeholder.hidden = true;
    let text = '';
    Object.defineProperty(placeholder, 'textContent', {
      get: () => text,
      set: (value: string | null) => {
        text = value ?? '';
        sheet.replaceSync(text);
      },
    });
    const remove = placeholder.remove.bind(placeholder);
    placeholder.remove = () => {
      this.adoptedStyleSheets = this.adoptedStyleSheets.filter((s) => s !== sheet);
      remove();
    };
    return placeholder;
  } as typeof Document.prototype.createElement;
}
