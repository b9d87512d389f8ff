// Package plot draws the pictures a person would rather look at than read: Gantt charts of one
// execution of a schedule (per transmitter and per 2×2 switch, like Tetris Figures 4 and 6),
// speedup heatmaps over bandwidth × reconfiguration delay (Figure 8), the distribution of
// completion time over the lower bound (Figure 7(b)), grouped bars (Figure 7(a)) and line plots
// against fabric size (Figure 9).
//
// Every function writes SVG or PNG from the same drawing code (gonum.org/v1/plot's vg canvases).
// Output depends only on the inputs: fixed page sizes, fixed fonts, no timestamps, so SVG output
// can be compared byte for byte against golden files.
package plot
