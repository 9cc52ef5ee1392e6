-- Floor layouts (one per floor location) and the files attached to them.
-- A location with a layout cannot be deleted: layouts.location_id has no
-- ON DELETE action, so DeleteLocation fails on the foreign key (CONFLICT).
CREATE TABLE layouts (
    location_id          BIGINT PRIMARY KEY REFERENCES locations (id),
    doc                  TEXT NOT NULL, -- JSON: size, unit, rfParamsPL, rfParamsSPM, calibrated
    obstacles_info       TEXT NOT NULL, -- JSON: obstaclesInfo, served as stored
    image_key            TEXT,
    spm_file_key         TEXT,
    uses_spm_file        BOOLEAN NOT NULL DEFAULT FALSE,
    modified_at          BIGINT NOT NULL,
    placement_changed_at BIGINT NOT NULL
);

-- Files live in the store so that replicas share them. Deleting a layout
-- deletes its files.
CREATE TABLE files (
    file_key     TEXT PRIMARY KEY,
    location_id  BIGINT NOT NULL REFERENCES layouts (location_id) ON DELETE CASCADE,
    kind         TEXT NOT NULL,
    content_type TEXT NOT NULL,
    size         BIGINT NOT NULL,
    bytes        BLOB NOT NULL,
    created_at   BIGINT NOT NULL
);
CREATE INDEX files_location ON files (location_id);
