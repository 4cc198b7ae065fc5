from agentstream.cli import main

raise SystemExit(main())
