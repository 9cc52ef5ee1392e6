//go:build unix

package snmp

import "syscall"

// diskUsage is the block size, blocks and used blocks of the file system
// holding path.
func diskUsage(path string) (unit, size, used uint64, ok bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, 0, 0, false
	}
	return uint64(st.Bsize), st.Blocks, st.Blocks - st.Bfree, true
}
