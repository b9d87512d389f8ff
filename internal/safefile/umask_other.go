//go:build !unix

package safefile

import "io/fs"

func currentUmask() fs.FileMode { return 0o022 }
