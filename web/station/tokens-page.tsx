/** `/station-tokens`: mint Station tokens and manage the issued ones. */
import { stationPaths } from '../../src/shared/protocol/api-paths.ts';
import type { StationTokenList } from '../../src/shared/protocol/station-tokens.ts';
import { api } from '../common/api.ts';
import { usePoll } from '../common/poll.ts';
import { ErrorText, Section } from '../common/ui.tsx';
import { MintForm } from './mint-form.tsx';
import { TokenList } from './token-list.tsx';

export function TokensPage() {
  const poll = usePoll(() => api.get<StationTokenList>(stationPaths.stationTokens), 15_000);
  return (
    <>
      <h1>Station tokens</h1>
      <MintForm onMinted={() => void poll.reload()} />
      <Section title="Issued tokens">
        <p class="muted">
          The Station keeps only each token's SHA-256 hash; a token cannot be shown again after minting.
        </p>
        <ErrorText error={poll.error} />
        {poll.data ? <TokenList tokens={poll.data.credentials} onChanged={poll.reload} /> : null}
      </Section>
    </>
  );
}
