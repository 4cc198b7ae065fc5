"""A small workflow automation backend: rules (an entity, a trigger, actions joined by edges),
the catalogue of action types, trigger types and entities, and the alerts rules fire. Kept in
SQLite and served by its own REST API (:mod:`.api`); the assistant's tools only ever call that
API, with the user's bearer token."""
