// Builds elements from text and other elements only: every piece of text goes in as a text node, so names,
// statuses and subjects typed by people can never become markup.

// el('li', { class: 'x', data: { placeId: 'a' }, attrs: { 'aria-label': 'y' }, text: 'z' }, child, ...)
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  if (props.class) node.className = props.class;
  if (props.id) node.id = props.id;
  if (props.text !== undefined && props.text !== null) node.textContent = String(props.text);
  for (const [name, value] of Object.entries(props.data ?? {})) node.dataset[name] = String(value);
  for (const [name, value] of Object.entries(props.attrs ?? {})) {
    if (value !== undefined && value !== null && value !== false) node.setAttribute(name, value === true ? '' : String(value));
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function byId(id) {
  return document.getElementById(id);
}

export function clear(node) {
  node.replaceChildren();
}

// A hint line in a list that has nothing to show.
export function emptyItem(text) {
  return el('li', { class: 'empty', text });
}

// A link that leaves the page: only http(s) addresses, opened in a new tab that cannot reach back to this one.
export function externalLink(href, text, className) {
  const link = el('a', { class: className, text, attrs: { target: '_blank', rel: 'noopener noreferrer' } });
  if (/^https?:\/\//i.test(href ?? '')) link.href = href;
  return link;
}
