package wnms

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// Location id types.
const (
	LocalLocationID  = "locallocationid"
	RemoteLocationID = "remotelocationid"
)

// Location types.
const (
	FolderLocation = "folderlocation"
	FloorLocation  = "floorlocation"
)

// Well-known locations (api.md §5).
const (
	RootLocation    int64 = 0
	UnknownLocation int64 = -1
)

// LocationID is the Location ID JSON of the interface.
type LocationID struct {
	Type    string `json:"type"`
	ID      int64  `json:"id"`
	ChildID *int64 `json:"childId,omitempty"`
}

// LocalID is the LocationID of a location of this server.
func LocalID(id int64) LocationID { return LocationID{Type: LocalLocationID, ID: id} }

// Key is the compact JSON of the id, used as the key of the location tree map.
func (l LocationID) Key() string {
	b, _ := json.Marshal(l)
	return string(b)
}

// Location is a node of the location tree: a folder or a floor.
type Location struct {
	Type             string        `json:"type"`
	ID               LocationID    `json:"id"`
	ParentID         *LocationID   `json:"parentId"`
	Name             string        `json:"name"`
	AccessibleToUser bool          `json:"accessibleToUser"`
	DefaultLocation  bool          `json:"defaultLocation"`
	TimezoneID       string        `json:"timezoneId"`
	LocationTag      *string       `json:"locationTag"`
	Children         *[]LocationID `json:"children,omitempty"`

	// CustomerID is 0 for the shared root and unknown locations.
	CustomerID int64 `json:"-"`
	// Path is the materialized path of ids from the root, "/0/5/12/".
	Path string `json:"-"`
}

// PathOf builds the materialized path of a location with the given id under
// a parent path.
func PathOf(parentPath string, id int64) string {
	return parentPath + strconv.FormatInt(id, 10) + "/"
}

// RootPath is the materialized path of the root location.
const RootPath = "/0/"

// Under reports whether path lies at or below ancestor.
func Under(path, ancestor string) bool {
	return len(path) >= len(ancestor) && path[:len(ancestor)] == ancestor
}

// IsFolder reports whether the location is a folder.
func (l *Location) IsFolder() bool { return l.Type == FolderLocation }

// RawJSON is a JSON value held as bytes, compared by content.
type RawJSON []byte

// Equal reports whether two raw values are byte-identical after compaction.
func (r RawJSON) Equal(o RawJSON) bool {
	var a, b bytes.Buffer
	if json.Compact(&a, r) != nil || json.Compact(&b, o) != nil {
		return false
	}
	return bytes.Equal(a.Bytes(), b.Bytes())
}
