"""`python -m tfrview.cli`: the same as `tfrview`."""

from tfrview.cli import main

raise SystemExit(main())
