// webgl.js — WebGL vendor and renderer. Runs in the page, iframes and workers (OffscreenCanvas).
// Without a GPU Chromium renders WebGL with SwiftShader, and WEBGL_debug_renderer_info says so
// ("ANGLE (Google, Vulkan ... SwiftShader Device ...)"), which no person's browser does. When the
// unmasked vendor or renderer names a software rasterizer (SwiftShader, llvmpipe, Mesa OffScreen),
// or when a vendor and renderer are configured, getParameter(UNMASKED_VENDOR_WEBGL = 0x9245) and
// getParameter(UNMASKED_RENDERER_WEBGL = 0x9246) answer with the configured (or default) GPU.
{
  const soft = /SwiftShader|llvmpipe|softpipe|Mesa OffScreen|Software/i;
  const fix = (t, self, args) => {
    const v = apply(t, self, args);
    const p = args[0];
    if (p === 0x9245 && typeof v === 'string' && (O.webglForce || soft.test(v) || soft.test(apply(t, self, [0x9246])))) return O.webglVendor;
    if (p === 0x9246 && typeof v === 'string' && (O.webglForce || soft.test(v))) return O.webglRenderer;
    return v;
  };
  if (G.WebGLRenderingContext) hookMethod(G.WebGLRenderingContext.prototype, 'getParameter', fix);
  if (G.WebGL2RenderingContext) hookMethod(G.WebGL2RenderingContext.prototype, 'getParameter', fix);
}
