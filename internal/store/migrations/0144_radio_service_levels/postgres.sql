-- The radio service levels' counts (docs/api.md, "Service levels"): per
-- UTC hour and place (location, AP (0: none known), SSID, band), the
-- client samples with radio metrics, those under the coverage threshold
-- (weak), those whose radio's utilisation was known (util_known) and of
-- those the ones on a busy radio (busy), and the roams found, the slow
-- ones and the suboptimal ones that were not slow. Kept by ingest in the transaction that stores the samples
-- and roams, as service_level_hours is for attempts.
CREATE TABLE service_level_radio (
    customer_id      BIGINT NOT NULL,
    hour             BIGINT NOT NULL,
    location_id      BIGINT NOT NULL,
    ap_box_id        BIGINT NOT NULL,
    ssid             TEXT NOT NULL,
    band             TEXT NOT NULL,
    samples          BIGINT NOT NULL,
    weak             BIGINT NOT NULL,
    util_known       BIGINT NOT NULL,
    busy             BIGINT NOT NULL,
    roams            BIGINT NOT NULL,
    slow_roams       BIGINT NOT NULL,
    suboptimal_roams BIGINT NOT NULL,
    PRIMARY KEY (customer_id, hour, location_id, ap_box_id, ssid, band)
);

-- Whether a client sample's radio was busy when it was taken (1: its
-- utilisation at or over the capacity threshold, 0: under it, NULL: not
-- known), so that an hour's counts can be made again from the samples.
ALTER TABLE client_stats ADD COLUMN busy SMALLINT;
