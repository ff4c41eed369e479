"""What the service does beyond running turns, one feature per module, each wired once in
`ShiroService.__init__` with concrete types (no hook lists): sessions on disk, prompt history,
the task list, project memory, project instructions, short-term memory, `/compact`. Commands call their methods."""
