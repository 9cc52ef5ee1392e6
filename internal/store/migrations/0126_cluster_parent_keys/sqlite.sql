-- A key made for a cluster parent (wnms apikey create --cluster-parent):
-- only its sessions may send X-Wnms-Acting-For and X-Wnms-Role-Cap.
ALTER TABLE api_keys ADD COLUMN cluster_parent BOOLEAN NOT NULL DEFAULT FALSE;
