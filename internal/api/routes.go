package api

import (
	"github.com/wnms/wnms/internal/console"
	"github.com/wnms/wnms/internal/telemetry"
)

// routes lists every call of the main listener, in the order of the
// vendor's interface, then our extensions. Paths are below the base path and the
// version segment (any of V1–V7, any case). Each call says who may make
// it and what it does in a cluster: forward (a call naming a child with
// nodeid is the child's), fanOut (the same, and a list that a session
// opened with getClusterChildrenData answers from every server at once)
// or local (the caller's session with this server: never forwarded).
func (s *Server) routes() {
	// Outside the calls: no session, never forwarded. GET /metrics is
	// served here too when ServeMetrics is called (serve --metrics-listen api).
	s.Router.Root.HandleFunc("GET /healthz", s.healthz)
	s.Router.Root.HandleFunc("GET /readyz", s.readyz)
	s.Router.Root.HandleFunc(BasePath+"/", s.dispatch) // the calls below, under any version segment
	// The web console: a page and its files, which use the calls below.
	con := console.New()
	s.Router.Root.Handle("GET /{$}", con)
	s.Router.Root.Handle("GET /console/", con)

	// Users.
	s.handle("GET /users", anyRole, forward, s.listUsers)
	s.handle("GET /users/customfields", anyRole, forward, s.listCustomFields)
	s.handle("GET /users/current", selfOnly, forward, s.currentUser)
	s.handle("GET /users/features", anyRole, forward, s.features)
	s.handle("PUT /users", suAdOp, forward, s.createUser)
	s.handle("POST /users", suAdOp, forward, s.modifyUser)
	s.handle("POST /users/ownpassword", selfOnly, forward, s.changeOwnPassword) // every role: it touches only the caller's own password
	s.handle("DELETE /users/{userid}", suAdOp, forward, s.deleteUser)

	// Session and system.
	s.handle("POST /login/key/{clientidentifier}/{timeout}", public, local, s.loginKey)
	s.handle("POST /logout", selfOnly, local, s.logout)
	s.handle("POST /login/keepsessionalive", selfOnly, local, s.keepAlive)
	s.handle("GET /login/keepsessionalive", selfOnly, local, s.keepAlive)
	s.handle("GET /system/version", public, forward, s.version)
	s.handle("GET /system/apiversion", public, forward, s.apiVersion)
	s.handle("GET /system/timezoneids", public, forward, s.timeZoneIDs)
	s.handle("GET /system/timestamp", anyRole, forward, s.timestamp)
	s.handle("GET /system/info", suAd, forward, s.systemInfo)

	// Client connection test profiles.
	// GET .../{startIndex}/{pageSize} and PUT /templates/copy/... have the
	// same shape but different methods, so the mux keeps them apart.
	s.handle("GET /templates/CL_CONN_TEST_PROFILE", anyRole, fanOut, s.listProfiles)
	s.handle("GET /templates/CL_CONN_TEST_PROFILE/{startIndex}/{pageSize}", anyRole, fanOut, s.pageProfiles)
	s.handle("GET /templates/{templateId}/CL_CONN_TEST_PROFILE", anyRole, fanOut, s.getProfile)
	s.handle("PUT /templates", suAdOp, forward, s.createProfile)
	s.handle("PUT /templates/copy/{templateId}/CL_CONN_TEST_PROFILE", suAdOp, forward, s.copyProfile)
	s.handle("POST /templates", suAdOp, forward, s.editProfile)
	s.handle("DELETE /templates/{templateId}/CL_CONN_TEST_PROFILE", suAdOp, forward, s.deleteProfile)

	// Global policies: SNMP and hotspot SSIDs.
	s.handle("GET /configuration/global/snmp", anyRole, fanOut, s.getSNMPPolicy)
	s.handle("PUT /configuration/global/snmp", suAd, forward, s.putSNMPPolicy)
	s.handle("POST /configuration/global/snmp/testtrap", suAd, forward, s.testTrap)
	s.handle("GET /configuration/global/hotspotssid", anyRole, fanOut, s.getHotspotSSIDPolicy)
	s.handle("PUT /configuration/global/hotspotssid", anyRole, forward, s.putHotspotSSIDPolicy)

	// Floor layouts and files.
	s.handle("GET /layouts", anyRole, fanOut, s.getLayout)
	s.handle("POST /layouts", anyRole, forward, s.setLayout)
	s.handle("DELETE /layouts", suAdOp, forward, s.deleteLayout)
	s.handle("GET /layouts/image", anyRole, forward, s.layoutImageLink)
	s.handle("POST /layouts/image", suAdOp, forward, s.uploadLayoutImage)
	s.handle("POST /layouts/spm", suAdOp, forward, s.uploadLayoutSPM)
	s.handle("GET /sfiles", anyRole, forward, s.sfile) // files are not lists to merge

	// Telemetry: ingest, the device lists, client events, trends and the
	// association export.
	s.handle("POST /ingest/aps", suAdOp, forward, s.ingest(telemetry.KindAPs))
	s.handle("POST /ingest/clientevents", suAdOp, forward, s.ingest(telemetry.KindEvents))
	s.handle("POST /ingest/clientstats", suAdOp, forward, s.ingest(telemetry.KindStats))
	s.handle("POST /ingest/radiostats", suAdOp, forward, s.ingest(telemetry.KindRadioStats))
	s.handle("POST /ingest/files", suAdOp, forward, s.ingestFile)
	s.handle("GET /devices/aps", suAdOp, fanOut, s.listAPs)
	s.handle("GET /devices/manageddevices", suAdOp, fanOut, s.managedDevices)
	s.handle("GET /devices/apstatus", anyRole, fanOut, s.apStatusList) // an extension: AP status for every role
	s.handle("GET /devices/clientevents/metadata", anyRole, fanOut, s.eventMetadata)
	s.handle("GET /devices/clientevents/{macaddress}/{offset}/{limit}", anyRole, fanOut, s.clientEvents)
	s.handle("GET /devices/clients/connectionlogs", anyRole, fanOut, s.connectionLogs)
	s.handle("GET /devices/clients", anyRole, fanOut, s.listClients)
	s.handle("GET /devices/clients/{offset}/{limit}", anyRole, fanOut, s.pageClients)
	s.handle("GET /devices/clients/{boxId}/observingmanageddevices", anyRole, fanOut, s.observers)
	s.handle("GET /analytics/associationdata/{startdate}/{enddate}", anyRole, fanOut, s.associationData)
	s.handle("GET /devices/clients/statistics/trend", anyRole, fanOut, s.clientTrend)
	s.handle("GET /devices/manageddevices/statistics/trend", anyRole, fanOut, s.apTrend)
	s.handle("GET /devices/manageddevices/{boxId}/radiostatistics", anyRole, fanOut, s.radioStats)
	s.handle("PUT /devices/manageddevices/{boxId}/position", suAdOp, forward, s.placeAP) // an extension: an AP on its floor plan

	// Baselines and anomalies.
	s.handle("GET /baselines/clientsconnectivity", anyRole, fanOut, s.connectivity)
	s.handle("GET /baselines/clientsperformance", anyRole, fanOut, s.performance)
	s.handle("GET /baselines/clientdatarate", anyRole, fanOut, s.dataRate)
	s.handle("GET /baselines/anomalies", anyRole, fanOut, s.anomalies)
	s.handle("GET /baselines/clientsconnectivity/failingclients", anyRole, fanOut, s.failingClients) // an extension

	// Incidents (an extension): anomalies grouped per site, with cause,
	// scope and evidence.
	s.handle("GET /incidents", anyRole, fanOut, s.listIncidents)
	s.handle("GET /incidents/{id}", anyRole, fanOut, s.getIncident)
	s.handle("POST /incidents/{id}/acknowledge", suAdOp, forward, s.acknowledgeIncident)

	// Extensions (api.md §2, §5, §6).
	s.handle("POST /login/{clientidentifier}/{timeout}", public, local, s.login)
	s.handle("PUT /users/customfields", suAd, forward, s.createCustomField)
	s.handle("GET /locations/tree", anyRole, fanOut, s.locationTree)
	s.handle("PUT /locations", suAd, forward, s.createLocation)
	s.handle("POST /locations", suAd, forward, s.modifyLocation)
	s.handle("DELETE /locations/{id}", suAd, forward, s.deleteLocation)
	s.handle("GET /apikeys", suAd, forward, s.listAPIKeys)
	s.handle("PUT /apikeys", suAd, forward, s.createAPIKey)
	s.handle("DELETE /apikeys/{keyId}", suAd, forward, s.deleteAPIKey)
	s.handle("GET /auditlog", suAd, fanOut, s.auditLog)
	s.handle("GET /events/stream", anyRole, local, s.eventStream) // this server's events, streamed: never buffered for a merge
	s.handle("GET /webhooks", suAd, fanOut, s.listWebhooks)
	s.handle("PUT /webhooks", suAd, forward, s.createWebhook)
	s.handle("POST /webhooks/{id}", suAd, forward, s.modifyWebhook)
	s.handle("DELETE /webhooks/{id}", suAd, forward, s.deleteWebhook)
	s.handle("GET /webhooks/{id}/deliveries", suAd, fanOut, s.webhookDeliveries)
	s.handle("POST /webhooks/{id}/test", suAd, forward, s.testWebhook)
	s.handle("GET /datasources", suAd, fanOut, s.getDataSources)
	s.handle("PUT /datasources", suAd, forward, s.putDataSources)
	s.handle("GET /datasources/status", suAd, fanOut, s.getDataSourceStatus)
	s.handle("GET /servicelevels", anyRole, fanOut, s.serviceLevels)
	s.handle("GET /servicelevels/targets", anyRole, fanOut, s.serviceLevelTargets)
	s.handle("PUT /servicelevels/targets", suAd, forward, s.putServiceLevelTargets)
	s.handle("GET /openapi.json", public, forward, s.openAPI)
}
