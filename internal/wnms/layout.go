package wnms

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
)

// FloorLayoutType is the type of every Floor layout.
const FloorLayoutType = "floorlayout"

// layoutUnits are the units of a layout's length and width.
var layoutUnits = []string{"FEET", "METER"}

// Obstacle types, in the canonical spelling (clients may send any case,
// samples write rectangularObstacle).
const (
	ArchedObstacle      = "ArchedObstacle"
	EllipticalObstacle  = "EllipticalObstacle"
	PolygonObstacle     = "PolygonObstacle"
	RectangularObstacle = "RectangularObstacle"
)

var obstacleTypes = []string{ArchedObstacle, EllipticalObstacle, PolygonObstacle, RectangularObstacle}

// Obstacle group ids.
const (
	IndoorMaterials  = "INDOOR_MATERIALS"
	OutdoorMaterials = "OUTDOOR_MATERIALS"
	OtherMaterials   = "OTHERS"
)

var obstacleGroups = []string{IndoorMaterials, OutdoorMaterials, OtherMaterials}

// Layout limits (api.md §11).
const (
	MaxLayoutSide       = 1_000_000 // length and width, in the layout's unit
	MaxObstacles        = 10_000
	MaxMaterials        = 100 // besides the built-ins
	MaxImageSize        = 20 << 20
	MaxImageSide        = 20_000 // pixels
	MaxSPMSize          = 64 << 20
	maxCoordinate       = 1e9
	maxAngle            = 360.0
	maxLayoutTextLength = 64
)

// File kinds attached to a layout.
const (
	FileImage  = "image"
	FileSPM    = "spm"
	FileExport = "export"
	FileBundle = "logbundle" // a connection log bundle, named by failure events' fileId
)

// FloorLayout is the floor layout of the interface (api.md §11): the plan of a floor
// location with its obstacles and radio parameters. The server sets
// Location (from the floor), the times, the file keys and RFParams.
type FloorLayout struct {
	Type                          string        `json:"type"`
	Location                      *Location     `json:"location"`
	Length                        int64         `json:"length"`
	Width                         int64         `json:"width"`
	Unit                          string        `json:"unit"`
	ImageKey                      *string       `json:"imageKey"`
	LastModifiedTime              int64         `json:"lastModifiedTime"`
	ObstaclesInfo                 ObstaclesInfo `json:"obstaclesInfo"`
	RFParamsPL                    RFParams      `json:"rfParamsPL"`
	RFParamsSPM                   RFParams      `json:"rfParamsSPM"`
	RFParams                      RFParams      `json:"rfParams"`
	UsesSpmFile                   bool          `json:"usesSpmFile"`
	SpmFileKey                    *string       `json:"spmFileKey"`
	Calibrated                    bool          `json:"calibrated"`
	LastSensorPlacementChangeTime int64         `json:"lastSensorPlacementChangeTime"`

	// LocationID is the floor the layout belongs to.
	LocationID int64 `json:"-"`
}

// Resolve fills the derived fields: the type and the effective rfParams
// (rfParamsSPM when an SPM file is used, else rfParamsPL).
func (l *FloorLayout) Resolve() {
	l.Type = FloorLayoutType
	if l.UsesSpmFile {
		l.RFParams = l.RFParamsSPM
	} else {
		l.RFParams = l.RFParamsPL
	}
	if l.ObstaclesInfo.Obstacles == nil {
		l.ObstaclesInfo.Obstacles = []Obstacle{}
	}
	if l.ObstaclesInfo.ObstacleGroupList == nil {
		l.ObstaclesInfo.ObstacleGroupList = []ObstacleGroup{}
	}
	if l.ObstaclesInfo.MaterialProperties == nil {
		l.ObstaclesInfo.MaterialProperties = map[string]Material{}
	}
}

// ObstaclesInfo is the obstacle model of a layout.
type ObstaclesInfo struct {
	MaterialProperties map[string]Material `json:"materialProperties"`
	Obstacles          []Obstacle          `json:"obstacles"`
	ObstacleGroupList  []ObstacleGroup     `json:"obstacleGroupList"`
}

// Material is a wall material with its radio behaviour per band.
type Material struct {
	ID                        string      `json:"id"`
	Name                      string      `json:"name"`
	AttenuationCoefficientsA  Attenuation `json:"attenuationCoefficientsA"`
	AttenuationCoefficientsBG Attenuation `json:"attenuationCoefficientsBG"`
	FillColor                 Color       `json:"fillColor"`
	GroupID                   string      `json:"groupId"`
}

// Attenuation says what a material does to a signal of one band (A: 5 GHz,
// BG: 2.4 GHz). Both are fractions of the incident power, 0–1:
// passthroughCoefficient is the part that passes through the obstacle,
// reflectionCoefficient the part reflected; the rest is absorbed, so the
// two add up to at most 1.
type Attenuation struct {
	PassthroughCoefficient float64 `json:"passthroughCoefficient"`
	ReflectionCoefficient  float64 `json:"reflectionCoefficient"`
}

// Color is an RGB fill colour, each channel 0–255.
type Color struct {
	R int `json:"r"`
	G int `json:"g"`
	B int `json:"b"`
}

// Obstacle is a wall, column or other shape on the plan. Breadth and
// Height belong to rectangular obstacles only.
type Obstacle struct {
	Type               string     `json:"type"`
	CenterX            float64    `json:"centerX"`
	CenterY            float64    `json:"centerY"`
	Angle              float64    `json:"angle"`
	Thickness          float64    `json:"thickness"`
	MaterialID         string     `json:"materialId"`
	Breadth            *float64   `json:"breadth,omitempty"`
	Height             *float64   `json:"height,omitempty"`
	EnclosingRectangle *Rectangle `json:"enclosingRectangle,omitempty"`
}

// Rectangle is the bounding box of an obstacle.
type Rectangle struct {
	TopLeftX     float64 `json:"topLeftx"`
	TopLeftY     float64 `json:"topLefty"`
	BottomRightX float64 `json:"bottomRightx"`
	BottomRightY float64 `json:"bottomRighty"`
}

// ObstacleGroup is a group of materials shown or hidden together.
type ObstacleGroup struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Visible bool   `json:"visible"`
}

// RFParams are the parameters of the two-slope path-loss model used to
// predict coverage: the attenuation constant (path-loss exponent) grows
// from minAttenuationConstant near the radio to maxAttenuationConstant
// far from it, around the distance signalDecayInflection (in the layout's
// unit), at the rate signaleDecaySlope (the interface's spelling).
type RFParams struct {
	SignalDecayInflection  float64 `json:"signalDecayInflection"`
	MaxAttenuationConstant float64 `json:"maxAttenuationConstant"`
	MinAttenuationConstant float64 `json:"minAttenuationConstant"`
	SignaleDecaySlope      float64 `json:"signaleDecaySlope"`
}

// DefaultRFParamsPL is the path-loss model for image and blank layouts:
// free-space propagation (exponent 2) near the radio, rising to a typical
// indoor exponent of 3.5 beyond about 10 units, where walls not drawn on
// the plan take their toll.
var DefaultRFParamsPL = RFParams{SignalDecayInflection: 10, MaxAttenuationConstant: 3.5, MinAttenuationConstant: 2, SignaleDecaySlope: 0.5}

// DefaultRFParamsSPM is the model for layouts with an SPM (site planning
// model) file: its walls are modelled explicitly, so the far exponent is
// lower and the inflection later.
var DefaultRFParamsSPM = RFParams{SignalDecayInflection: 15, MaxAttenuationConstant: 3, MinAttenuationConstant: 2, SignaleDecaySlope: 0.4}

// Built-in material ids.
const (
	MaterialConcrete       = "CONCRETE"
	MaterialBrick          = "BRICK"
	MaterialGlass          = "GLASS"
	MaterialConcreteColumn = "CONCRETE_COLUMN"
)

// BuiltinMaterials are present in every layout unless the layout redefines
// them. The coefficients are fractions of incident power (see Attenuation),
// from typical measured losses of common building materials: a 20 cm
// concrete wall loses about 12 dB at 2.4 GHz and 15 dB at 5 GHz; a 10 cm
// brick wall about 6 and 10 dB; clear glass about 2 and 3 dB; a concrete
// column about 18 and 25 dB. Concrete reflects about a third of the power,
// brick a fifth, glass a tenth.
func BuiltinMaterials() map[string]Material {
	return map[string]Material{
		MaterialConcrete: {ID: MaterialConcrete, Name: "Concrete", GroupID: IndoorMaterials,
			AttenuationCoefficientsA:  Attenuation{PassthroughCoefficient: 0.032, ReflectionCoefficient: 0.32},
			AttenuationCoefficientsBG: Attenuation{PassthroughCoefficient: 0.063, ReflectionCoefficient: 0.30},
			FillColor:                 Color{128, 128, 128}},
		MaterialBrick: {ID: MaterialBrick, Name: "Brick", GroupID: IndoorMaterials,
			AttenuationCoefficientsA:  Attenuation{PassthroughCoefficient: 0.10, ReflectionCoefficient: 0.22},
			AttenuationCoefficientsBG: Attenuation{PassthroughCoefficient: 0.25, ReflectionCoefficient: 0.20},
			FillColor:                 Color{178, 34, 34}},
		MaterialGlass: {ID: MaterialGlass, Name: "Glass", GroupID: IndoorMaterials,
			AttenuationCoefficientsA:  Attenuation{PassthroughCoefficient: 0.50, ReflectionCoefficient: 0.12},
			AttenuationCoefficientsBG: Attenuation{PassthroughCoefficient: 0.63, ReflectionCoefficient: 0.10},
			FillColor:                 Color{135, 206, 235}},
		MaterialConcreteColumn: {ID: MaterialConcreteColumn, Name: "Concrete column", GroupID: IndoorMaterials,
			AttenuationCoefficientsA:  Attenuation{PassthroughCoefficient: 0.003, ReflectionCoefficient: 0.35},
			AttenuationCoefficientsBG: Attenuation{PassthroughCoefficient: 0.016, ReflectionCoefficient: 0.35},
			FillColor:                 Color{96, 96, 96}},
	}
}

// DefaultObstacleGroups is the group list of a layout that sends none.
func DefaultObstacleGroups() []ObstacleGroup {
	return []ObstacleGroup{
		{ID: IndoorMaterials, Name: "Indoor materials", Visible: true},
		{ID: OutdoorMaterials, Name: "Outdoor materials", Visible: true},
		{ID: OtherMaterials, Name: "Others", Visible: true},
	}
}

// LayoutInput is a Floor layout as a client sends it to POST /layouts.
// Pointers tell absent fields from zero ones. Server-set fields (times,
// file keys, rfParams) are not read.
type LayoutInput struct {
	Type          *string             `json:"type"`
	Location      *LayoutLocationRef  `json:"location"`
	Length        *int64              `json:"length"`
	Width         *int64              `json:"width"`
	Unit          *string             `json:"unit"`
	ObstaclesInfo *ObstaclesInfoInput `json:"obstaclesInfo"`
	RFParamsPL    *RFParamsInput      `json:"rfParamsPL"`
	RFParamsSPM   *RFParamsInput      `json:"rfParamsSPM"`
	UsesSpmFile   *bool               `json:"usesSpmFile"`
	Calibrated    *bool               `json:"calibrated"`
}

// LayoutLocationRef is the part of the layout's location object the server
// reads: its id, which must name the floor of the call.
type LayoutLocationRef struct {
	ID *LocationID `json:"id"`
}

// ObstaclesInfoInput is obstaclesInfo as sent.
type ObstaclesInfoInput struct {
	MaterialProperties map[string]*Material `json:"materialProperties"`
	Obstacles          []*Obstacle          `json:"obstacles"`
	ObstacleGroupList  []*ObstacleGroup     `json:"obstacleGroupList"`
}

// RFParamsInput is an rfParams object as sent; absent fields take the
// default.
type RFParamsInput struct {
	SignalDecayInflection  *float64 `json:"signalDecayInflection"`
	MaxAttenuationConstant *float64 `json:"maxAttenuationConstant"`
	MinAttenuationConstant *float64 `json:"minAttenuationConstant"`
	SignaleDecaySlope      *float64 `json:"signaleDecaySlope"`
}

// badValue is the error of an unknown enum value (api.md §3:
// INVALID_REQUEST_BODY), naming the field.
func badValue(field, value string, allowed []string) *Error {
	return &Error{Code: InvalidRequestBody, MoreInfo: field,
		Message: fmt.Sprintf("%s: unknown value %q; use one of %s", field, value, strings.Join(allowed, ", "))}
}

// canonical returns the allowed spelling matching v case-insensitively.
func canonical(v string, allowed []string) (string, bool) {
	for _, a := range allowed {
		if strings.EqualFold(strings.TrimSpace(v), a) {
			return a, true
		}
	}
	return "", false
}

func checkNumber(field string, v, min, max float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return Invalid(field, "must be a finite number")
	}
	if v < min || v > max {
		return Invalid(field, "must be between %g and %g", min, max)
	}
	return nil
}

// Layout validates the input and builds the layout to store for the floor
// locationID, applying defaults: the built-in materials (unless
// redefined), the default obstacle groups when none are sent, and the
// default rfParams for absent values. Server-managed fields are left zero.
// An unknown enum value (type, unit, obstacle type, group id) is
// INVALID_REQUEST_BODY; a broken rule is VALIDATION_FAILED naming the
// field.
func (in *LayoutInput) Layout(locationID int64) (*FloorLayout, error) {
	l := &FloorLayout{Type: FloorLayoutType, LocationID: locationID}
	if in.Type != nil {
		if _, ok := canonical(*in.Type, []string{FloorLayoutType}); !ok {
			return nil, badValue("type", *in.Type, []string{FloorLayoutType})
		}
	}
	if in.Location != nil && in.Location.ID != nil {
		id := in.Location.ID
		if id.Type != "" && id.Type != LocalLocationID {
			return nil, Invalid("location.id.type", "must be %s", LocalLocationID)
		}
		if id.ID != locationID {
			return nil, Invalid("location.id", "is %d but locationid is %d", id.ID, locationID)
		}
	}
	for _, side := range []struct {
		name string
		v    *int64
		dst  *int64
	}{{"length", in.Length, &l.Length}, {"width", in.Width, &l.Width}} {
		if side.v == nil {
			return nil, Invalid(side.name, "required")
		}
		if *side.v <= 0 || *side.v > MaxLayoutSide {
			return nil, Invalid(side.name, "must be between 1 and %d", MaxLayoutSide)
		}
		*side.dst = *side.v
	}
	if in.Unit == nil {
		return nil, Invalid("unit", "required")
	}
	u, ok := canonical(*in.Unit, layoutUnits)
	if !ok {
		return nil, badValue("unit", *in.Unit, layoutUnits)
	}
	l.Unit = u
	var err error
	if l.ObstaclesInfo, err = in.ObstaclesInfo.build(); err != nil {
		return nil, err
	}
	if l.RFParamsPL, err = in.RFParamsPL.build("rfParamsPL", DefaultRFParamsPL); err != nil {
		return nil, err
	}
	if l.RFParamsSPM, err = in.RFParamsSPM.build("rfParamsSPM", DefaultRFParamsSPM); err != nil {
		return nil, err
	}
	if in.Calibrated != nil {
		l.Calibrated = *in.Calibrated
	}
	if in.UsesSpmFile != nil {
		l.UsesSpmFile = *in.UsesSpmFile
	}
	l.Resolve()
	return l, nil
}

func (p *RFParamsInput) build(field string, def RFParams) (RFParams, error) {
	out := def
	if p == nil {
		return out, nil
	}
	for _, f := range []struct {
		name string
		v    *float64
		dst  *float64
		max  float64
	}{
		{"signalDecayInflection", p.SignalDecayInflection, &out.SignalDecayInflection, MaxLayoutSide},
		{"maxAttenuationConstant", p.MaxAttenuationConstant, &out.MaxAttenuationConstant, 100},
		{"minAttenuationConstant", p.MinAttenuationConstant, &out.MinAttenuationConstant, 100},
		{"signaleDecaySlope", p.SignaleDecaySlope, &out.SignaleDecaySlope, 1000},
	} {
		if f.v == nil {
			continue
		}
		if err := checkNumber(field+"."+f.name, *f.v, 0, f.max); err != nil {
			return out, err
		}
		*f.dst = *f.v
	}
	if out.MinAttenuationConstant > out.MaxAttenuationConstant {
		return out, Invalid(field+".minAttenuationConstant", "must not exceed maxAttenuationConstant (%g)", out.MaxAttenuationConstant)
	}
	return out, nil
}

func (in *ObstaclesInfoInput) build() (ObstaclesInfo, error) {
	out := ObstaclesInfo{MaterialProperties: BuiltinMaterials(), Obstacles: []Obstacle{}, ObstacleGroupList: DefaultObstacleGroups()}
	if in == nil {
		return out, nil
	}
	if err := out.buildMaterials(in.MaterialProperties); err != nil {
		return out, err
	}
	if in.ObstacleGroupList != nil {
		groups, err := buildGroups(in.ObstacleGroupList)
		if err != nil {
			return out, err
		}
		out.ObstacleGroupList = groups
	}
	if len(in.Obstacles) > MaxObstacles {
		return out, Invalid("obstaclesInfo.obstacles", "at most %d obstacles", MaxObstacles)
	}
	out.Obstacles = make([]Obstacle, 0, len(in.Obstacles))
	for i, o := range in.Obstacles {
		field := fmt.Sprintf("obstaclesInfo.obstacles[%d]", i)
		if o == nil {
			return out, Invalid(field, "must be an object")
		}
		ob, err := buildObstacle(field, o, out.MaterialProperties)
		if err != nil {
			return out, err
		}
		out.Obstacles = append(out.Obstacles, ob)
	}
	return out, nil
}

func (out *ObstaclesInfo) buildMaterials(in map[string]*Material) error {
	keys := make([]string, 0, len(in))
	custom := 0
	for k := range in {
		keys = append(keys, k)
		if _, builtin := out.MaterialProperties[k]; !builtin {
			custom++
		}
	}
	if custom > MaxMaterials {
		return Invalid("obstaclesInfo.materialProperties", "at most %d materials besides the built-ins", MaxMaterials)
	}
	sort.Strings(keys) // report the same error for the same body
	for _, key := range keys {
		m := in[key]
		field := "obstaclesInfo.materialProperties." + key
		if err := CheckText("obstaclesInfo.materialProperties", key, 1, maxLayoutTextLength); err != nil {
			return err
		}
		if m == nil {
			return Invalid(field, "must be an object")
		}
		mat := *m
		if mat.ID == "" {
			mat.ID = key
		}
		if mat.ID != key {
			return Invalid(field+".id", "must equal its key %q", key)
		}
		if mat.Name == "" {
			mat.Name = key
		}
		if err := CheckText(field+".name", mat.Name, 1, maxLayoutTextLength); err != nil {
			return err
		}
		if mat.GroupID == "" {
			mat.GroupID = OtherMaterials
		} else if g, ok := canonical(mat.GroupID, obstacleGroups); ok {
			mat.GroupID = g
		} else {
			return badValue(field+".groupId", mat.GroupID, obstacleGroups)
		}
		for _, band := range []struct {
			name string
			a    Attenuation
		}{{"attenuationCoefficientsA", mat.AttenuationCoefficientsA}, {"attenuationCoefficientsBG", mat.AttenuationCoefficientsBG}} {
			f := field + "." + band.name
			if err := checkNumber(f+".passthroughCoefficient", band.a.PassthroughCoefficient, 0, 1); err != nil {
				return err
			}
			if err := checkNumber(f+".reflectionCoefficient", band.a.ReflectionCoefficient, 0, 1); err != nil {
				return err
			}
			if band.a.PassthroughCoefficient+band.a.ReflectionCoefficient > 1+1e-9 {
				return Invalid(f, "passthroughCoefficient + reflectionCoefficient must not exceed 1")
			}
		}
		for _, c := range []struct {
			name string
			v    int
		}{{"r", mat.FillColor.R}, {"g", mat.FillColor.G}, {"b", mat.FillColor.B}} {
			if c.v < 0 || c.v > 255 {
				return Invalid(field+".fillColor."+c.name, "must be between 0 and 255")
			}
		}
		out.MaterialProperties[key] = mat
	}
	return nil
}

func buildGroups(in []*ObstacleGroup) ([]ObstacleGroup, error) {
	out := make([]ObstacleGroup, 0, len(in))
	seen := map[string]bool{}
	if len(in) > len(obstacleGroups) {
		return nil, Invalid("obstaclesInfo.obstacleGroupList", "at most %d groups", len(obstacleGroups))
	}
	for i, g := range in {
		field := fmt.Sprintf("obstaclesInfo.obstacleGroupList[%d]", i)
		if g == nil {
			return nil, Invalid(field, "must be an object")
		}
		id, ok := canonical(g.ID, obstacleGroups)
		if !ok {
			return nil, badValue(field+".id", g.ID, obstacleGroups)
		}
		if seen[id] {
			return nil, Invalid(field+".id", "%s is listed twice", id)
		}
		seen[id] = true
		if err := CheckText(field+".name", g.Name, 0, maxLayoutTextLength); err != nil {
			return nil, err
		}
		out = append(out, ObstacleGroup{ID: id, Name: g.Name, Visible: g.Visible})
	}
	return out, nil
}

func buildObstacle(field string, o *Obstacle, materials map[string]Material) (Obstacle, error) {
	ob := *o
	typ, ok := canonical(o.Type, obstacleTypes)
	if !ok {
		return ob, badValue(field+".type", o.Type, obstacleTypes)
	}
	ob.Type = typ
	for _, n := range []struct {
		name     string
		v        float64
		min, max float64
	}{
		{"centerX", o.CenterX, -maxCoordinate, maxCoordinate},
		{"centerY", o.CenterY, -maxCoordinate, maxCoordinate},
		{"angle", o.Angle, -maxAngle, maxAngle},
		{"thickness", o.Thickness, 0, maxCoordinate},
	} {
		if err := checkNumber(field+"."+n.name, n.v, n.min, n.max); err != nil {
			return ob, err
		}
	}
	if o.MaterialID == "" {
		return ob, Invalid(field+".materialId", "required")
	}
	if _, ok := materials[o.MaterialID]; !ok {
		return ob, Invalid(field+".materialId", "unknown material %q; define it in obstaclesInfo.materialProperties", o.MaterialID)
	}
	if typ == RectangularObstacle {
		for _, d := range []struct {
			name string
			v    *float64
		}{{"breadth", o.Breadth}, {"height", o.Height}} {
			if d.v == nil {
				return ob, Invalid(field+"."+d.name, "required for a %s", RectangularObstacle)
			}
			if err := checkNumber(field+"."+d.name, *d.v, 0, maxCoordinate); err != nil {
				return ob, err
			}
			if *d.v == 0 {
				return ob, Invalid(field+"."+d.name, "must be greater than 0")
			}
		}
	} else if o.Breadth != nil || o.Height != nil {
		return ob, Invalid(field, "breadth and height belong to a %s only, not a %s", RectangularObstacle, typ)
	}
	if r := o.EnclosingRectangle; r != nil {
		for _, n := range []struct {
			name string
			v    float64
		}{{"topLeftx", r.TopLeftX}, {"topLefty", r.TopLeftY}, {"bottomRightx", r.BottomRightX}, {"bottomRighty", r.BottomRightY}} {
			if err := checkNumber(field+".enclosingRectangle."+n.name, n.v, -maxCoordinate, maxCoordinate); err != nil {
				return ob, err
			}
		}
		rc := *r
		ob.EnclosingRectangle = &rc
	}
	if o.Breadth != nil {
		b, h := *o.Breadth, *o.Height
		ob.Breadth, ob.Height = &b, &h
	}
	return ob, nil
}

// File is a file attached to a floor layout (its image or SPM file), kept
// in the store and served by GET /sfiles?id=Key.
type File struct {
	Key         string
	LocationID  int64
	CustomerID  int64  // the owner of an export; 0 for a layout's file (its floor's customer)
	UserID      int64  // the user who made an export
	Kind        string // FileImage, FileSPM or FileExport
	ContentType string
	Size        int64
	Data        []byte
	CreatedAt   int64
}

// LayoutStore keeps the floor layouts, one per floor location. A floor
// without a layout is RESOURCE_NOT_FOUND. A location that has a layout
// cannot be deleted (CONFLICT from DeleteLocation).
type LayoutStore interface {
	// Layout reads the layout of a floor, with Resolve applied; Location
	// is left nil.
	Layout(ctx context.Context, locationID int64) (*FloorLayout, error)
	// LayoutJSON reads the layout of a floor like Layout but returns its
	// obstaclesInfo as the canonical JSON it was stored as, leaving
	// ObstaclesInfo empty: the read path serves it without decoding.
	LayoutJSON(ctx context.Context, locationID int64) (*FloorLayout, []byte, error)
	// PutLayout creates or replaces the layout of l.LocationID, keeping its
	// file keys, and sets both times to now. usesSpmFile nil keeps the
	// stored flag; true without an SPM file is VALIDATION_FAILED.
	PutLayout(ctx context.Context, l *FloorLayout, usesSpmFile *bool) error
	// DeleteLayout removes the layout of a floor and its files.
	DeleteLayout(ctx context.Context, locationID int64) error
}

// FileStore keeps the files attached to layouts. An unknown key or a floor
// without a layout is RESOURCE_NOT_FOUND.
type FileStore interface {
	// AttachFile stores f as the image or SPM file (f.Kind) of the layout
	// of f.LocationID, replacing and deleting the previous one, and returns
	// the updated layout. An SPM file also sets usesSpmFile.
	AttachFile(ctx context.Context, f *File) (*FloorLayout, error)
	// File reads a file with its bytes: a layout's, or an export.
	File(ctx context.Context, key string) (*File, error)
	// PutExport stores an export file of f.CustomerID at f.LocationID.
	PutExport(ctx context.Context, f *File) error
}
