import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { ApiError } from "../api";

export interface Loaded<T> {
  data: T | null;
  error: ApiError | null;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` whenever `key` changes (and on reload); keeps the last data while reloading. */
export function useLoad<T>(load: () => Promise<T>, key: string): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [loading, setLoading] = useState(true);
  const [round, setRound] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const mine = ++latest.current;
    setLoading(true);
    load().then(
      (value) => {
        if (mine !== latest.current) return;
        setData(value);
        setError(null);
        setLoading(false);
      },
      (problem: unknown) => {
        if (mine !== latest.current) return;
        setError(problem instanceof ApiError ? problem : new ApiError(0, [String(problem)], {}));
        setLoading(false);
      },
    );
  }, [key, round]);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  return { data, error, loading, reload };
}

/** An action's state: running, and its error in the API's words; the form keeps what was typed. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const run = async <T>(action: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(null);
    try {
      return await action();
    } catch (problem) {
      setError(problem instanceof ApiError ? problem : new ApiError(0, [String(problem)], {}));
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run, clear: () => setError(null) };
}
