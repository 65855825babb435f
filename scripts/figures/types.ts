/** What a figure table gets to render itself: its results files, and links to them from the doc it is in. */
export type Results = {
  /** A results file the table declared in `sources`, parsed. */
  read<T>(path: string): T;
  /** A results file the table declared in `sources`, as text (a report's prose holds what its json lacks). */
  text(path: string): string;
  /** A markdown link to a repository file from the doc being rendered. */
  link(path: string): string;
};

export type FigureTable = {
  /** The results files it reads, from the repository's root (`bench/results/<bench>/…json`). */
  sources: readonly string[];
  render(results: Results): string;
};

/** A figure of one results file: the file it declares is the file it reads. */
export function ofFile<T>(path: string, render: (results: T, link: Results['link']) => string): FigureTable {
  return { sources: [path], render: ({ read, link }) => render(read<T>(path), link) };
}

/** A figure of several results files, read in the order given. */
export function ofFiles<T>(
  paths: readonly string[],
  render: (runs: T[], link: Results['link']) => string,
): FigureTable {
  return {
    sources: paths,
    render: ({ read, link }) =>
      render(
        paths.map((path) => read<T>(path)),
        link,
      ),
  };
}

/** A run a figure names: its results file and how the table labels it. */
export type Labelled = { path: string; label: string };

/** A figure of labelled runs, each with its results file read beside it. */
export function ofRuns<T>(
  runs: readonly Labelled[],
  render: (runs: (Labelled & { results: T })[], link: Results['link']) => string,
): FigureTable {
  return {
    sources: runs.map((run) => run.path),
    render: ({ read, link }) =>
      render(
        runs.map((run) => ({ ...run, results: read<T>(run.path) })),
        link,
      ),
  };
}
