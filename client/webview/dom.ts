// The one DOM helper of the Divergence webview: an element with attributes (empty values left out) and children.
export function el(tag: string, attrs: Record<string, string>, ...children: (Node | string)[]): HTMLElement {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== '') node.setAttribute(k, v);
  node.append(...children);
  return node;
}
