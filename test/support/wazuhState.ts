// Wazuh's documentation shows this example of the agent's state file (search-tool file id 103640389;
// the ossec-agentd name of Wazuh before 4.2); the status words are client-agent/state.c's
// (search-tool file id 37432825), which writes this layout.
export const WAZUH_STATE_EXAMPLE = [
  '# State file for ossec-agentd',
  '',
  '# Agent status:',
  '# - pending:      waiting for get connected.',
  '# - connected:    connection established with manager in the last 10 seconds.',
  '# - disconnected: connection lost or no ACK received in the last 10 seconds.',
  "status='connected'",
  '',
  '# Last time a keepalive was sent',
  "last_keepalive='2018-08-21 12:11:21'",
  '',
  '# Last time a control message was received',
  "last_ack='2018-08-21 12:11:21'",
  '',
  '# Number of generated events',
  "msg_count='5619'",
  '',
  '# Number of messages (events + control messages) sent to the manager',
  "msg_sent='5801'",
  '',
].join('\n');
