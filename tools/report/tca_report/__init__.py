"""tca-report: figures and a page from the JSON reports of tca's programs."""
