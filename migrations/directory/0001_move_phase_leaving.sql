-- A move's last phase has one name, in the directory as on the shard it leaves: `leaving` (it was
-- `cleaning` in the directory). Code that does not know the new name, running between this
-- migration and the deploy, logs a `move_error` for such a move and leaves it alone; the new code
-- goes on with it.
UPDATE accounts SET move_state = 'leaving' WHERE move_state = 'cleaning';
