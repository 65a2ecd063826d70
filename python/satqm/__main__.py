"""``python -m satqm``: the same as the ``satqm`` command."""

from satqm.cli import main

raise SystemExit(main())
