from tfrview.cli import main

raise SystemExit(main())
