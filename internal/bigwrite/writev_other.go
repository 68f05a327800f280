//go:build !linux

package bigwrite

import "syscall"

// iovMax is how many slices one write takes here: one.
const iovMax = 1

// writev writes bs to fd slice by slice, as long as each is written whole. It returns the bytes
// written and the error of the last write.
func writev(fd int, bs [][]byte) (int, error) {
	total := 0
	for _, b := range bs {
		if len(b) == 0 {
			continue
		}
		n, err := syscall.Write(fd, b)
		if err != nil {
			return total, err
		}
		total += n
		if n < len(b) {
			break
		}
	}
	return total, nil
}
