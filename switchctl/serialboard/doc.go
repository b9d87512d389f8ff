// Package serialboard drives 2×2 switches over a serial line with the line-based, SCPI-like
// protocol of the README ("Switch board protocol"): a microcontroller board driving many
// elements (backend "serial"), the crystal driver board used by the holographic crystal backend,
// and a dialect for a single-switch product in the style of Thorlabs' OSW22 (backend "osw22",
// one port per switch) to show how a vendor command set plugs in.
//
// Ports are opened with github.com/tarm/serial, always with a read timeout; see Link.
package serialboard
