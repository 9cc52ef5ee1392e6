-- Devices and APs (docs/api.md §15). Every device the server learns of,
-- an AP now and clients later, gets a boxId on first sight: the id of its
-- row in devices, stable and never reused.
CREATE TABLE devices (
    box_id      BIGSERIAL PRIMARY KEY,
    customer_id BIGINT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    kind        TEXT NOT NULL,
    mac         TEXT NOT NULL
);
CREATE UNIQUE INDEX devices_mac ON devices (customer_id, kind, mac);

-- The AP inventory, upserted by heartbeats. active is the liveness last
-- announced (wnmsApDown/wnmsApUp); activeStatus on read is computed from
-- last_seen. radios is the JSON list of the AP's radios.
CREATE TABLE aps (
    box_id                 BIGINT PRIMARY KEY REFERENCES devices (box_id) ON DELETE CASCADE,
    customer_id            BIGINT NOT NULL,
    mac                    TEXT NOT NULL,
    name                   TEXT NOT NULL,
    model                  TEXT NOT NULL,
    ip_address             TEXT NOT NULL,
    location_id            BIGINT NOT NULL REFERENCES locations (id),
    software_version       TEXT NOT NULL,
    vendor_name            TEXT NOT NULL,
    device_capability      INTEGER NOT NULL,
    ap_template_name       TEXT NOT NULL,
    placed                 BOOLEAN NOT NULL,
    num_assoc_clients      INTEGER NOT NULL,
    troubleshooting_status INTEGER NOT NULL,
    grp                    TEXT NOT NULL,
    up_since               BIGINT NOT NULL,
    last_seen              BIGINT NOT NULL,
    active                 BOOLEAN NOT NULL,
    radios                 TEXT NOT NULL
);
CREATE INDEX aps_location ON aps (customer_id, location_id);
CREATE INDEX aps_last_seen ON aps (active, last_seen);

-- Which AP a BSSID belongs to: events and samples take the location of
-- the AP whose radio they name.
CREATE TABLE ap_radios (
    customer_id BIGINT NOT NULL,
    bssid       TEXT NOT NULL,
    box_id      BIGINT NOT NULL REFERENCES aps (box_id) ON DELETE CASCADE,
    PRIMARY KEY (customer_id, bssid)
);
CREATE INDEX ap_radios_box ON ap_radios (box_id);
