-- Where an AP is on its floor's layout (the layout's unit, from its top
-- left corner); NULL when not reported.
ALTER TABLE aps ADD COLUMN pos_x DOUBLE PRECISION, ADD COLUMN pos_y DOUBLE PRECISION;
