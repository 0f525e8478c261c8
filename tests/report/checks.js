(() => {
  const drawn = (svg) => svg.querySelectorAll("path.line, path.area, rect.bar, rect.pod").length;
  const pixels = (canvas) => {
    const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    let coloured = 0, dark = 0;
    for (let i = 0; i < data.length; i += 4) {
      const [r, g, b] = [data[i], data[i + 1], data[i + 2]];
      if (r < 250 || g < 250 || b < 250) coloured++;
      if (r < 70 && g < 70 && b < 70) dark++;
    }
    return { id: canvas.id, coloured, dark, width: canvas.width, height: canvas.height };
  };
  return {
    svgs: [...document.querySelectorAll("svg.chart")].map((s) => ({ label: s.getAttribute("aria-label"), drawn: drawn(s) })),
    canvases: [...document.querySelectorAll("canvas.heat")].map(pixels),
    sections: [...document.querySelectorAll("section")].map((s) => s.id),
    pwned: window.__pwned === undefined ? null : window.__pwned,
  };
})()
