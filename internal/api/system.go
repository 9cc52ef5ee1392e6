package api

import (
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/wnms/wnms/internal/cluster"

	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/tz"
)

// versionInfo is GET /system/version.
type versionInfo struct {
	Version string `json:"version"`
	Build   string `json:"build"`
}

func (s *Server) version(w http.ResponseWriter, r *http.Request) error {
	if _, err := httpkit.QueryInt(r, "locationid", 0); err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, versionInfo{Version: s.Info.Version, Build: s.Info.Build})
	return nil
}

// APIVersion is the API version this server speaks.
const APIVersion = "V5"

func (s *Server) apiVersion(w http.ResponseWriter, r *http.Request) error {
	httpkit.WriteJSON(w, http.StatusOK, APIVersion)
	return nil
}

func (s *Server) timeZoneIDs(w http.ResponseWriter, r *http.Request) error {
	es, err := tz.Entries(s.Auth.Now())
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, es)
	return nil
}

func (s *Server) timestamp(w http.ResponseWriter, r *http.Request) error {
	httpkit.WriteJSON(w, http.StatusOK, s.Auth.Now().UnixMilli())
	return nil
}

// SystemInfo is GET /V7/system/info.
type SystemInfo struct {
	ServerID                  int          `json:"serverID"`
	SensorCommunicationPort   int          `json:"sensorCommunicationPort"`
	MaxSensorsAllowed         int          `json:"maxSensorsAllowed"`
	MaxAllowableAPConversions int          `json:"maxAllowableAPConversions"`
	InstanceID                int          `json:"instanceID"`
	ExpiryDate                int64        `json:"expiryDate"`
	SerialNumber              string       `json:"serialNumber"`
	BuildNumber               string       `json:"buildNumber"`
	Version                   string       `json:"version"`
	ApplianceModel            string       `json:"applianceModel"`
	OS                        string       `json:"os"`
	ServerURL                 string       `json:"serverUrl"`
	MTStatus                  bool         `json:"mtStatus"`
	BackupFiles               []BackupFile `json:"backupFiles"`
	AwareConfig               AwareConfig  `json:"awareConfig"`
	// ClusterChildren are the child servers of a parent, and whether each
	// answered at its last contact (empty on a server without children).
	ClusterChildren []cluster.ChildStatus `json:"clusterChildren"`
}

// BackupFile is a backup found in the data directory.
type BackupFile struct {
	BackupFileName  string `json:"backupFileName"`
	FileSizeInBytes int64  `json:"fileSizeInBytes"`
	CreationDate    int64  `json:"creationDate"`
	DBBackupType    string `json:"dbBackupType"`
}

// AwareConfig describes the analytics host.
type AwareConfig struct {
	Hostname              *string `json:"hostname"`
	OnPremHostname        string  `json:"onPremHostname"`
	AwareInstalledLocally bool    `json:"awareInstalledLocally"`
}

func (s *Server) systemInfo(w http.ResponseWriter, r *http.Request) error {
	backups, err := ListBackups(s.Info.DataDir)
	if err != nil {
		return err
	}
	serial, err := s.Store.SettingOrInit(r.Context(), "serial_number", func() string {
		return "WNMS-" + strings.ToUpper(randomHex(6))
	})
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, SystemInfo{
		ServerID: s.Info.ServerID, SensorCommunicationPort: 3851, MaxSensorsAllowed: 100000,
		MaxAllowableAPConversions: 100000, InstanceID: s.Info.ServerID, ExpiryDate: 0,
		SerialNumber: serial, BuildNumber: s.Info.Build, Version: s.Info.Version,
		ApplianceModel: "wnms-software", OS: runtime.GOOS + "/" + runtime.GOARCH, ServerURL: s.Info.ServerURL,
		MTStatus: false, BackupFiles: backups,
		AwareConfig:     AwareConfig{Hostname: nil, OnPremHostname: s.Info.Hostname, AwareInstalledLocally: true},
		ClusterChildren: s.clusterStatus(),
	})
	return nil
}

// ListBackups lists the backups in dataDir/backups, newest first.
func ListBackups(dataDir string) ([]BackupFile, error) {
	out := []BackupFile{}
	if dataDir == "" {
		return out, nil
	}
	entries, err := os.ReadDir(filepath.Join(dataDir, "backups"))
	if os.IsNotExist(err) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".db") {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		out = append(out, BackupFile{BackupFileName: e.Name(), FileSizeInBytes: fi.Size(),
			CreationDate: fi.ModTime().UnixMilli(), DBBackupType: "FULL"})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreationDate > out[j].CreationDate })
	return out, nil
}

// clusterStatus lists the cluster's children ([] without a cluster).
func (s *Server) clusterStatus() []cluster.ChildStatus {
	out := []cluster.ChildStatus{}
	if s.Cluster != nil {
		out = append(out, s.Cluster.Status()...)
	}
	return out
}
