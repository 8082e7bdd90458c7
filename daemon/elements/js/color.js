// Any CSS color as the #rrggbb a color input stores; null when it is no color or not opaque.
(value) => {
  if (!CSS.supports('color', value)) return null;
  const context = document.createElement('canvas').getContext('2d');
  context.fillStyle = value;
  return context.fillStyle.startsWith('#') ? context.fillStyle : null;
}
