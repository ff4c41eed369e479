"""Every start-up trick of the server, in one place: what each buys and costs is measured in
docs/performance.md ("Start-up tricks"). Nothing here is needed for correctness; each only makes
a start faster. Empty on purpose: the terminal client imports trace and warm_socket from here
before anything heavy, so importing the package must cost nothing."""
