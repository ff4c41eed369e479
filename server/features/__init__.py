"""What the service does beyond running turns, one feature per module, each wired once in
`ShiroService.__init__` with concrete types (no hook lists) and given what it needs (the session
registry, settings, the sink through its session, the collaborators it calls), never the service: sessions on disk, prompt history,
the task list, project memory, project instructions, short-term memory, `/compact`. Commands call their methods."""
