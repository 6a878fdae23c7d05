// DOM helpers shared by the widgets' front-end modules (prepended to each: an anywidget module is one file).
function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

