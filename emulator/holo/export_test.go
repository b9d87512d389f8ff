package holo

// EmbedSVGFonts lets the external tests turn font embedding off for their golden SVGs.
var EmbedSVGFonts = &embedSVGFonts
