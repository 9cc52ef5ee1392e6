package api

import "github.com/wnms/wnms/internal/telemetry"

// routes lists every call of the main listener, in the order of the
// vendor's interface, then our extensions. Paths are below the base path and the
// version segment (any of V1–V7, any case).
func (s *Server) routes() {
	// Users.
	s.handle("GET /users", anyRole, s.listUsers)
	s.handle("GET /users/customfields", anyRole, s.listCustomFields)
	s.handle("GET /users/current", selfOnly, s.currentUser)
	s.handle("GET /users/features", anyRole, s.features)
	s.handle("PUT /users", suAdOp, s.createUser)
	s.handle("POST /users", suAdOp, s.modifyUser)
	s.handle("POST /users/ownpassword", selfOnly, s.changeOwnPassword) // every role: it touches only the caller's own password
	s.handle("DELETE /users/{userid}", suAdOp, s.deleteUser)

	// Session and system.
	s.handle("POST /login/key/{clientidentifier}/{timeout}", public, s.loginKey)
	s.handle("POST /logout", selfOnly, s.logout)
	s.handle("POST /login/keepsessionalive", selfOnly, s.keepAlive)
	s.handle("GET /login/keepsessionalive", selfOnly, s.keepAlive)
	s.handle("GET /system/version", public, s.version)
	s.handle("GET /system/apiversion", public, s.apiVersion)
	s.handle("GET /system/timezoneids", public, s.timeZoneIDs)
	s.handle("GET /system/timestamp", anyRole, s.timestamp)
	s.handle("GET /system/info", suAd, s.systemInfo)

	// Client connection test profiles.
	// GET .../{startIndex}/{pageSize} and PUT /templates/copy/... have the
	// same shape but different methods, so the mux keeps them apart.
	s.handle("GET /templates/CL_CONN_TEST_PROFILE", anyRole, s.listProfiles)
	s.handle("GET /templates/CL_CONN_TEST_PROFILE/{startIndex}/{pageSize}", anyRole, s.pageProfiles)
	s.handle("GET /templates/{templateId}/CL_CONN_TEST_PROFILE", anyRole, s.getProfile)
	s.handle("PUT /templates", suAdOp, s.createProfile)
	s.handle("PUT /templates/copy/{templateId}/CL_CONN_TEST_PROFILE", suAdOp, s.copyProfile)
	s.handle("POST /templates", suAdOp, s.editProfile)
	s.handle("DELETE /templates/{templateId}/CL_CONN_TEST_PROFILE", suAdOp, s.deleteProfile)

	// Global policies: SNMP and hotspot SSIDs.
	s.handle("GET /configuration/global/snmp", anyRole, s.getSNMPPolicy)
	s.handle("PUT /configuration/global/snmp", suAd, s.putSNMPPolicy)
	s.handle("POST /configuration/global/snmp/testtrap", suAd, s.testTrap)
	s.handle("GET /configuration/global/hotspotssid", anyRole, s.getHotspotSSIDPolicy)
	s.handle("PUT /configuration/global/hotspotssid", anyRole, s.putHotspotSSIDPolicy)

	// Floor layouts and files.
	s.handle("GET /layouts", anyRole, s.getLayout)
	s.handle("POST /layouts", anyRole, s.setLayout)
	s.handle("DELETE /layouts", suAdOp, s.deleteLayout)
	s.handle("GET /layouts/image", anyRole, s.layoutImageLink)
	s.handle("POST /layouts/image", suAdOp, s.uploadLayoutImage)
	s.handle("POST /layouts/spm", suAdOp, s.uploadLayoutSPM)
	s.handle("GET /sfiles", anyRole, s.sfile)

	// Telemetry: ingest, the device lists, client events, trends and the
	// association export.
	s.handle("POST /ingest/aps", suAdOp, s.ingest(telemetry.KindAPs))
	s.handle("POST /ingest/clientevents", suAdOp, s.ingest(telemetry.KindEvents))
	s.handle("POST /ingest/clientstats", suAdOp, s.ingest(telemetry.KindStats))
	s.handle("POST /ingest/files", suAdOp, s.ingestFile)
	s.handle("GET /devices/aps", suAdOp, s.listAPs)
	s.handle("GET /devices/manageddevices", suAdOp, s.managedDevices)
	s.handle("GET /devices/apstatus", anyRole, s.apStatusList) // an extension: AP status for every role
	s.handle("GET /devices/clientevents/metadata", anyRole, s.eventMetadata)
	s.handle("GET /devices/clientevents/{macaddress}/{offset}/{limit}", anyRole, s.clientEvents)
	s.handle("GET /devices/clients/connectionlogs", anyRole, s.connectionLogs)
	s.handle("GET /devices/clients", anyRole, s.listClients)
	s.handle("GET /devices/clients/{offset}/{limit}", anyRole, s.pageClients)
	s.handle("GET /devices/clients/{boxId}/observingmanageddevices", anyRole, s.observers)
	s.handle("GET /analytics/associationdata/{startdate}/{enddate}", anyRole, s.associationData)
	s.handle("GET /devices/clients/statistics/trend", anyRole, s.clientTrend)
	s.handle("GET /devices/manageddevices/statistics/trend", anyRole, s.apTrend)

	// Baselines and anomalies.
	s.handle("GET /baselines/clientsconnectivity", anyRole, s.connectivity)
	s.handle("GET /baselines/clientsperformance", anyRole, s.performance)
	s.handle("GET /baselines/clientdatarate", anyRole, s.dataRate)
	s.handle("GET /baselines/anomalies", anyRole, s.anomalies)
	s.handle("GET /baselines/clientsconnectivity/failingclients", anyRole, s.failingClients) // an extension

	// Incidents (an extension): anomalies grouped per site, with cause,
	// scope and evidence.
	s.handle("GET /incidents", anyRole, s.listIncidents)
	s.handle("GET /incidents/{id}", anyRole, s.getIncident)
	s.handle("POST /incidents/{id}/acknowledge", suAdOp, s.acknowledgeIncident)

	// Extensions (api.md §2, §5, §6).
	s.handle("POST /login/{clientidentifier}/{timeout}", public, s.login)
	s.handle("PUT /users/customfields", suAd, s.createCustomField)
	s.handle("GET /locations/tree", anyRole, s.locationTree)
	s.handle("PUT /locations", suAd, s.createLocation)
	s.handle("POST /locations", suAd, s.modifyLocation)
	s.handle("DELETE /locations/{id}", suAd, s.deleteLocation)
	s.handle("GET /apikeys", suAd, s.listAPIKeys)
	s.handle("PUT /apikeys", suAd, s.createAPIKey)
	s.handle("DELETE /apikeys/{keyId}", suAd, s.deleteAPIKey)
	s.handle("GET /auditlog", suAd, s.auditLog)
	s.handle("GET /events/stream", anyRole, s.eventStream)
	s.handle("GET /webhooks", suAd, s.listWebhooks)
	s.handle("PUT /webhooks", suAd, s.createWebhook)
	s.handle("POST /webhooks/{id}", suAd, s.modifyWebhook)
	s.handle("DELETE /webhooks/{id}", suAd, s.deleteWebhook)
	s.handle("GET /webhooks/{id}/deliveries", suAd, s.webhookDeliveries)
	s.handle("POST /webhooks/{id}/test", suAd, s.testWebhook)
	s.handle("GET /datasources", suAd, s.getDataSources)
	s.handle("PUT /datasources", suAd, s.putDataSources)
	s.handle("GET /datasources/status", suAd, s.getDataSourceStatus)
	s.handle("GET /servicelevels", anyRole, s.serviceLevels)
	s.handle("GET /servicelevels/targets", anyRole, s.serviceLevelTargets)
	s.handle("PUT /servicelevels/targets", suAd, s.putServiceLevelTargets)
	s.handle("GET /openapi.json", public, s.openAPI)
}
